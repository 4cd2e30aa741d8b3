// The production build's split (esbuild.mjs, scripts/lazy-files.cjs): dist/extension.js stays
// under its size goal and holds neither the ACP agent runtime, the Claude Code on the web backend
// nor the session server's client; each of those is a file of its own that Node loads only when it is first used (a
// probe bundled with the same plugin shows the files loaded at each step); and each lazy file is
// in the package.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { PackageManager, listFiles } from '@vscode/vsce';
import * as esbuild from 'esbuild';
import { REPO_ROOT, buildBundles, tempRoot, type TempRoot } from '../../bench/extensionStaging';
import { LAZY_FILES, lazyFilesPlugin } from '../../scripts/lazy-files.cjs';

const run = promisify(execFile);

/** The goal for the minified extension bundle. */
const EXTENSION_JS_LIMIT_KB = 300;
/** Text only the ACP agent runtime holds (CONTINUE_PLANNING_PROMPT in acpAgent.ts). */
const ACP_RUNTIME_TEXT = 'Continue planning without changing any file';
/** Text only the Claude Code on the web backend holds (SESSIONS_SCOPE in credentials.ts). */
const CLAUDE_WEB_TEXT = 'user:sessions:claude_code';

/** Text only the session server's HTTP client holds (SessionsClient's network error). */
const SERVER_CLIENT_TEXT = 'Could not reach the session server at';

interface ProbeSteps {
  atLoad: string[];
  factoryMade: string[];
  agentMade: { loaded: string[]; label: string };
  agentStarted: { loaded: string[]; results: string[] };
  claudeWeb: { loaded: string[]; error: { isClaudeWebError: boolean; reason: string } | null };
  serverMade: string[];
  server: { error: { isSessionsError: boolean; kind: string } | null };
}

describe('the production bundles: files loaded on first use', function () {
  this.timeout(180_000);
  let root: TempRoot | undefined;
  let dist = '';
  const read = (name: string) => fs.readFileSync(path.join(dist, name), 'utf8');

  before(async () => {
    root = await tempRoot('ultraplan-lazy-files-');
    dist = await buildBundles(path.join(root.dir, 'build'), { production: true });
  });
  after(async () => {
    await root?.remove();
  });

  it(`dist/extension.js is under ${EXTENSION_JS_LIMIT_KB} KB minified`, () => {
    const kb = fs.statSync(path.join(dist, 'extension.js')).size / 1024;
    assert.ok(kb < EXTENSION_JS_LIMIT_KB, `dist/extension.js is ${kb.toFixed(1)} KB`);
  });

  it('dist/extension.js requires the Claude Code on the web backend and the server client instead of holding them, and never loads the ACP agent runtime (agents run in the session service)', () => {
    const extension = read('extension.js');
    for (const { file } of LAZY_FILES) assert.ok(fs.existsSync(path.join(dist, `${file}.js`)), `no dist/${file}.js`);
    assert.ok(!extension.includes(ACP_RUNTIME_TEXT), 'the ACP agent runtime is inlined in extension.js');
    assert.ok(read('acp-agent.js').includes(ACP_RUNTIME_TEXT));
    assert.ok(!extension.includes(CLAUDE_WEB_TEXT), 'the Claude Code on the web backend is inlined in extension.js');
    assert.ok(read('claude-web.js').includes(CLAUDE_WEB_TEXT));
    assert.doesNotMatch(extension, /require\("\.\/acp-agent\.js"\)/);
    assert.match(read('server.js'), /require\("\.\/acp-agent\.js"\)/);
    assert.match(extension, /require\("\.\/claude-web\.js"\)/);
    assert.match(extension, /require\("\.\/server-client\.js"\)/);
    assert.ok(!extension.includes(SERVER_CLIENT_TEXT), 'the server client is inlined in extension.js');
    assert.ok(read('server-client.js').includes(SERVER_CLIENT_TEXT));
    assert.match(read('acp-agent.js'), /require\("\.\/vendor-acp-sdk\.js"\)/);
  });

  it('each is loaded when first used: the runtime when an agent is made, the SDK when it starts, a backend when it is made', async () => {
    const probe = path.join(dist, 'probe.js');
    await esbuild.build({
      entryPoints: [path.join(REPO_ROOT, 'test', 'scripts', 'lazyFiles', 'probe.ts')],
      outfile: probe,
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      plugins: [lazyFilesPlugin()],
      logLevel: 'warning',
    });
    const { stdout } = await run(process.execPath, [probe], { cwd: dist, timeout: 60_000 });
    const steps = JSON.parse(stdout) as ProbeSteps;
    const lazy = ['acp-agent.js', 'vendor-acp-sdk.js', 'claude-web.js', 'server-client.js'];
    assert.deepEqual(
      steps.atLoad.filter((f) => lazy.includes(f)),
      [],
    );
    assert.deepEqual(
      steps.factoryMade.filter((f) => lazy.includes(f)),
      [],
    );
    assert.deepEqual(
      steps.agentMade.loaded.filter((f) => lazy.includes(f)),
      ['acp-agent.js'],
    );
    assert.equal(steps.agentMade.label, 'Missing (ACP)');
    assert.deepEqual(steps.agentStarted.loaded.filter((f) => lazy.includes(f)).sort(), ['acp-agent.js', 'vendor-acp-sdk.js']);
    assert.match(steps.agentStarted.results.join('\n'), /Could not start Missing \(ACP\) \(\/nonexistent\/ultraplan-agent\): ENOENT/);
    assert.deepEqual(steps.claudeWeb.loaded.filter((f) => lazy.includes(f)).sort(), ['acp-agent.js', 'claude-web.js', 'vendor-acp-sdk.js']);
    // Thrown by the backend file's copy of ClaudeWebError, recognised by the probe's own.
    assert.deepEqual(steps.claudeWeb.error, { isClaudeWebError: true, reason: 'not_logged_in' });
    assert.deepEqual(steps.serverMade.filter((f) => lazy.includes(f)).sort(), [
      'acp-agent.js',
      'claude-web.js',
      'server-client.js',
      'vendor-acp-sdk.js',
    ]);
    // Thrown by the server client file's copy of SessionsError, recognised by the probe's own (the poller's check).
    assert.deepEqual(steps.server.error, { isSessionsError: true, kind: 'transient' });
  });

  it('each lazy file is in the package (vsce ls)', async () => {
    const files = (await listFiles({ cwd: REPO_ROOT, packageManager: PackageManager.None })).map((f) => f.split(path.sep).join('/'));
    for (const { file } of LAZY_FILES) assert.ok(files.includes(`dist/${file}.js`), `dist/${file}.js is not in the package`);
  });
});
