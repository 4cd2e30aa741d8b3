#!/usr/bin/env node
// `npm start`: Ultraplan in a real VS Code in the browser. Installs what is missing (system
// packages, code-server, node_modules), builds, makes a sample workspace and starts code-server
// on 127.0.0.1 with the extension installed. The default backend (embedded) needs nothing else.
// Ctrl-C stops code-server and everything it started.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSystemDeps } from './ensure-system-deps.mjs';
import { setupCodeServer } from './setup-code-server.mjs';

const require = createRequire(import.meta.url);
const codeServer = require('./code-server-config.cjs');

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stateDir = path.join(repoRoot, '.cache', 'start');
const sampleWorkspace = path.join(repoRoot, '.cache', 'sample-workspace');
const DEFAULT_PORT = 8080;

function log(line) {
  console.log(`[start] ${line}`);
}

function runOrExit(command, args) {
  log(`$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    console.error(`[start] \`${command} ${args.join(' ')}\` failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
}

function canListen(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function choosePort() {
  const wanted = process.env.PORT ? Number(process.env.PORT) : DEFAULT_PORT;
  if (!Number.isInteger(wanted) || wanted < 0 || wanted > 65535) {
    console.error(`[start] PORT=${process.env.PORT} is not a port number`);
    process.exit(1);
  }
  if (wanted !== 0 && (await canListen(wanted))) return wanted;
  const free = await new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
  if (wanted !== 0) log(`port ${wanted} is taken; using ${free}`);
  return free;
}

/** A small git repository to plan in, made once and kept (your edits in it survive restarts). */
function ensureSampleWorkspace() {
  if (existsSync(path.join(sampleWorkspace, '.git'))) return;
  log(`creating the sample workspace ${path.relative(repoRoot, sampleWorkspace)}`);
  const files = {
    'README.md':
      '# Todo CLI\n\nA tiny command-line todo list, here to try Ultraplan on.\nTry: "Ultraplan: Plan a Task…" with "add a --done flag that marks an item done".\n',
    'package.json':
      JSON.stringify({ name: 'todo-cli', version: '0.1.0', private: true, type: 'module', bin: { todo: 'src/cli.js' } }, null, 2) + '\n',
    'src/cli.js':
      "#!/usr/bin/env node\nimport { addItem, listItems } from './store.js';\n\nconst [command, ...rest] = process.argv.slice(2);\nif (command === 'add') {\n  addItem(rest.join(' '));\n} else {\n  for (const item of listItems()) console.log(`- ${item.text}`);\n}\n",
    'src/store.js':
      "import { existsSync, readFileSync, writeFileSync } from 'node:fs';\n\nconst FILE = 'todo.json';\n\nexport function listItems() {\n  return existsSync(FILE) ? JSON.parse(readFileSync(FILE, 'utf8')) : [];\n}\n\nexport function addItem(text) {\n  const items = listItems();\n  items.push({ text, done: false });\n  writeFileSync(FILE, JSON.stringify(items, null, 2));\n}\n",
  };
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(sampleWorkspace, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Ultraplan sample',
    GIT_AUTHOR_EMAIL: 'sample@example.invalid',
    GIT_COMMITTER_NAME: 'Ultraplan sample',
    GIT_COMMITTER_EMAIL: 'sample@example.invalid',
  };
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'Sample project'],
  ]) {
    const result = spawnSync('git', args, { cwd: sampleWorkspace, stdio: 'ignore', env: gitEnv });
    if (result.status !== 0) log(`git ${args[0]} failed in the sample workspace (it still works, without history)`);
  }
}

/** Extensions folder holding only a symlink to this repo, remade each start (the version may change). */
function prepareExtensionsDir() {
  const extensionsDir = path.join(stateDir, 'extensions');
  rmSync(extensionsDir, { recursive: true, force: true });
  mkdirSync(extensionsDir, { recursive: true });
  const { publisher, name, version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  symlinkSync(repoRoot, path.join(extensionsDir, `${publisher}.${name}-${version}`));
  return extensionsDir;
}

/**
 * The user data folder is kept, so workspace state (sessions in flight) survives a restart; only
 * VS Code's cached extension scan is dropped, which would otherwise hide manifest changes.
 */
function prepareUserDataDir() {
  const userDataDir = path.join(stateDir, 'user-data');
  for (const cache of ['CachedProfilesData', 'CachedExtensionVSIXs', 'clp'])
    rmSync(path.join(userDataDir, cache), { recursive: true, force: true });
  const settingsFile = path.join(userDataDir, 'User', 'settings.json');
  if (!existsSync(settingsFile)) {
    mkdirSync(path.dirname(settingsFile), { recursive: true });
    writeFileSync(settingsFile, JSON.stringify(codeServer.WORKBENCH_SETTINGS, null, 2));
  }
  return userDataDir;
}

async function waitForHttp(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.status < 500) return true;
    } catch (err) {
      if (process.env.ULTRAPLAN_START_DEBUG) console.error(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

async function main() {
  ensureSystemDeps();
  await setupCodeServer();
  if (!existsSync(path.join(repoRoot, 'node_modules'))) runOrExit('npm', ['ci', '--no-audit', '--no-fund']);
  runOrExit('npm', ['run', '--silent', 'build']);
  ensureSampleWorkspace();
  const extensionsDir = prepareExtensionsDir();
  const userDataDir = prepareUserDataDir();
  const port = await choosePort();

  const child = spawn(process.execPath, codeServer.codeServerArgs({ port, userDataDir, extensionsDir, workspace: sampleWorkspace }), {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
    env: codeServer.codeServerEnv({ ...process.env, XDG_CONFIG_HOME: path.join(stateDir, 'config') }),
  });
  let stopping = false;
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    log('stopping code-server');
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }, 3_000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`[start] code-server exited (${code ?? signal})`);
    process.exit(stopping ? 0 : (code ?? 1));
  });

  const url = `http://127.0.0.1:${port}`;
  if (!(await waitForHttp(`${url}/healthz`, child, 60_000))) {
    console.error('[start] code-server did not answer within 60 s');
    stop('SIGTERM');
    return;
  }
  console.log('');
  log('Ultraplan is running in code-server (VS Code 1.100.3), backend: embedded (demo scenario).');
  log(`Open: ${url}/?folder=${encodeURIComponent(sampleWorkspace)}`);
  log('Then F1 -> "Ultraplan: Plan a Task…". Ctrl-C stops it.');
}

main().catch((err) => {
  console.error(`[start] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
