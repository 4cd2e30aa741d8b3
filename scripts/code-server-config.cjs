// Where the cached code-server lives and how we run it. One file so the setup script,
// `npm start` and the e2e harness agree without importing each other.
'use strict';
const os = require('node:os');
const path = require('node:path');

const CODE_SERVER_VERSION = '4.100.3';
const VSCODE_VERSION = '1.100.3';

function cacheRoot() {
  return process.env.ULTRAPLAN_CACHE || path.join(os.homedir(), '.cache', 'ultraplan');
}

function codeServerHome() {
  return path.join(cacheRoot(), `code-server-${CODE_SERVER_VERSION}`);
}

/** Written last by scripts/setup-code-server.mjs, so its presence means a whole install. */
function codeServerMarker() {
  return path.join(codeServerHome(), '.install-complete');
}

function codeServerEntry() {
  return path.join(codeServerHome(), 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

/** User settings that keep welcome pages, tips and update checks out of the way. */
const WORKBENCH_SETTINGS = Object.freeze({
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.openRepositoryInParentFolders': 'never',
  'security.workspace.trust.startupPrompt': 'never',
  'chat.commandCenter.enabled': false,
  'editor.accessibilitySupport': 'off',
  'workbench.colorTheme': 'Default Dark Modern',
});

/** Arguments for `node <codeServerEntry()> …` (TESTING.md step 6). */
function codeServerArgs({ port, userDataDir, extensionsDir, workspace, workspaceTrust = false }) {
  return [
    codeServerEntry(),
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    workspace,
  ];
}

/**
 * The environment code-server (and so the extension host) runs with. PORT is dropped: code-server
 * takes its port from PORT over --bind-addr, and we always pass the port we chose. The PATH entries
 * npm adds for a script (node_modules/.bin folders, npm's node-gyp-bin) are dropped too: they hold
 * this project's dev tools, among them the Claude ACP adapter, which the agent detection would
 * otherwise take for an agent the person installed.
 */
function codeServerEnv(env) {
  const copy = { ...env };
  delete copy.PORT;
  const pathKey = Object.keys(copy).find((k) => k.toUpperCase() === 'PATH');
  if (pathKey && typeof copy[pathKey] === 'string') {
    copy[pathKey] = copy[pathKey]
      .split(path.delimiter)
      .filter((dir) => !/[\\/]node_modules[\\/]\.bin[\\/]?$/.test(dir) && !/[\\/]node-gyp-bin[\\/]?$/.test(dir))
      .join(path.delimiter);
  }
  return copy;
}

module.exports = {
  codeServerEnv,
  WORKBENCH_SETTINGS,
  codeServerArgs,
  CODE_SERVER_VERSION,
  VSCODE_VERSION,
  cacheRoot,
  codeServerHome,
  codeServerMarker,
  codeServerEntry,
};
