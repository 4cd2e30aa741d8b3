// Where the cached code-server lives. One file so the setup script, `npm start` and the
// e2e harness agree on the folder without importing each other.
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

module.exports = { CODE_SERVER_VERSION, VSCODE_VERSION, cacheRoot, codeServerHome, codeServerMarker, codeServerEntry };
