// Where the cached code-server lives and how we run it. One file so the setup script,
// `npm start` and the e2e harness agree without importing each other.
'use strict';
const os = require('node:os');
const path = require('node:path');

/**
 * The code-servers we run on: the engine floor (package.json `engines.vscode`) and the newest on
 * npm. `node`: the Node major it needs when the one running us will not do, installed from npm's
 * `node@<major>` into the cache (scripts/setup-code-server.mjs, TESTING.md).
 */
const CODE_SERVERS = Object.freeze({
  '4.100.3': Object.freeze({ vscode: '1.100.3', node: null }),
  '4.139.1': Object.freeze({ vscode: '1.139.1', node: '24' }),
});
const FLOOR = '4.100.3';
const NEWEST = '4.139.1';
/** Names the code-server the e2e harness, the benches and `npm start` run (default: the floor). */
const CODE_SERVER_ENV = 'ULTRAPLAN_CODE_SERVER';

/** The code-server version to run: ULTRAPLAN_CODE_SERVER when set, else the engine floor. */
function selectedVersion(env = process.env) {
  const version = env[CODE_SERVER_ENV] || FLOOR;
  if (!Object.hasOwn(CODE_SERVERS, version)) {
    throw new Error(`${CODE_SERVER_ENV}=${version}: not one of ${Object.keys(CODE_SERVERS).join(', ')}`);
  }
  return version;
}

function cacheRoot() {
  return process.env.ULTRAPLAN_CACHE || path.join(os.homedir(), '.cache', 'ultraplan');
}

function codeServerHome(version = selectedVersion()) {
  return path.join(cacheRoot(), `code-server-${version}`);
}

/** Written last by scripts/setup-code-server.mjs, so its presence means a whole install. */
function codeServerMarker(version = selectedVersion()) {
  return path.join(codeServerHome(version), '.install-complete');
}

function codeServerEntry(version = selectedVersion()) {
  return path.join(codeServerHome(version), 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

/** Where npm's `node@<major>` is installed in the cache. */
function nodeHome(major) {
  return path.join(cacheRoot(), `node-${major}`);
}

/** The node binary of npm's `node@<major>` in the cache. */
function nodeBinary(major) {
  return path.join(nodeHome(major), 'node_modules', 'node', 'bin', 'node');
}

/** The node that runs this code-server: the cached one it needs, or the one running us. */
function codeServerNode(version = selectedVersion()) {
  const { node } = CODE_SERVERS[version];
  return node ? nodeBinary(node) : process.execPath;
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

/** Arguments for `<codeServerNode()> <codeServerEntry()> …` (TESTING.md step 6). */
function codeServerArgs({ port, userDataDir, extensionsDir, workspace, workspaceTrust = false, version = selectedVersion() }) {
  return [
    codeServerEntry(version),
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
  CODE_SERVERS,
  CODE_SERVER_ENV,
  FLOOR,
  NEWEST,
  selectedVersion,
  cacheRoot,
  codeServerHome,
  codeServerMarker,
  codeServerEntry,
  codeServerNode,
  nodeHome,
  nodeBinary,
};
