// Where the pinned ACP agents used by the tests are cached, and how to find their programs. One
// file so the setup script, the test runner and the tests agree without importing each other.
// The pinned versions live in src/sessions/acp/agentPackages.json (the extension offers the same).
'use strict';
const os = require('node:os');
const path = require('node:path');
const PACKAGES = require('../src/sessions/acp/agentPackages.json');

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

/** The installed program (node_modules/.bin/<bin>). */
function agentBin(id) {
  const spec = PACKAGES[id];
  return path.join(agentHome(id), 'node_modules', '.bin', process.platform === 'win32' ? `${spec.bin}.cmd` : spec.bin);
}

module.exports = { PACKAGES, cacheRoot, agentHome, agentMarker, agentBin };
