// Where the pinned ACP agents used by the tests are cached, and how to find their programs. One
// file so the setup script, the test runner and the tests agree without importing each other.
// The pinned versions live in src/agents/catalogue/agents.json (the extension offers the same).
'use strict';
const os = require('node:os');
const path = require('node:path');
const PACKAGES = require('../src/agents/catalogue/agents.json');

function cacheRoot() {
  return process.env.ULTRAPLAN_CACHE || path.join(os.homedir(), '.cache', 'ultraplan');
}

/** The agent's own folder: one per id and version, so a new pin installs beside the old one. */
function agentHome(id) {
  const spec = PACKAGES[id];
  if (!spec) throw new Error(`unknown agent "${id}"; known: ${Object.keys(PACKAGES).join(', ')}`);
  return path.join(cacheRoot(), 'agents', `${id}-${spec.version}`);
}

/** Written last by scripts/setup-agents.mjs, so its presence means a whole, checked install. */
function agentMarker(id) {
  return path.join(agentHome(id), '.install-complete');
}

/**
 * The native program of a package whose bin is put in place by its postinstall script (OpenCode's
 * `bin/opencode.exe` is a stub until `postinstall.mjs` links the platform package's program over
 * it): the setup installs with scripts off, so the platform package's program is run directly.
 */
const NATIVE_BINS = {
  opencode: () =>
    path.join('node_modules', `opencode-${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`, 'bin', 'opencode'),
};

/** The installed program (node_modules/.bin/<bin>, or the native program of NATIVE_BINS). */
function agentBin(id) {
  const spec = PACKAGES[id];
  if (NATIVE_BINS[id]) return path.join(agentHome(id), NATIVE_BINS[id]());
  return path.join(agentHome(id), 'node_modules', '.bin', process.platform === 'win32' ? `${spec.bin}.cmd` : spec.bin);
}

/** Where a Debian package unpacked for Ultraplan alone lives (scripts/ensure-system-deps.mjs). */
function privateToolsDir(debianPackage) {
  return path.join(cacheRoot(), 'tools', debianPackage);
}

/** The bubblewrap the agents' sandbox runs when none is installed: never on PATH (docs/security.md). */
function privateBwrap() {
  return path.join(privateToolsDir('bubblewrap'), 'usr', 'bin', 'bwrap');
}

module.exports = { PACKAGES, cacheRoot, agentHome, agentMarker, agentBin, privateToolsDir, privateBwrap };
