// The production build of our Node programs as one ES module graph (esbuild.mjs, docs/packaging.md):
// every module in exactly one file, zod once; what the extension loads first stays under its size
// goal and holds neither the ACP agent runtime nor the Claude Code on the web backend; each of those
// is a chunk Node loads only at its first use (a probe built into
// the same graph shows the files loaded at each step); the CommonJS bootstrap holds only its own
// small stateless modules; and every file the extension can load is in the package.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { PackageManager, listFiles } from '@vscode/vsce';
import * as esbuild from 'esbuild';
import { REPO_ROOT, tempRoot, type TempRoot } from '../../bench/extensionStaging';

const run = promisify(execFile);

/** The goal for what the extension loads when it is first used (minified). */
const EXTENSION_FIRST_LOAD_LIMIT_KB = 300;
/** The seams: a chunk named after the module behind each `await import()`. */
const LAZY_CHUNKS = { acpRuntime: 'acpAgent', claudeWeb: 'backend' } as const;

interface ProbeSteps {
  atLoad: string[];
  factoryMade: string[];
  agentStarted: { loaded: string[]; label: string; results: string[] };
  claudeWeb: { loaded: string[]; error: { isClaudeWebError: boolean; reason: string } | null };
  server: { error: { isSessionsError: boolean; kind: string } | null };
  atEnd: string[];
}

type Metafile = esbuild.Metafile;

/** The graph's files reached from `entry` through static imports only (what loading it loads). */
function staticClosure(meta: Metafile, entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const { path: imported, kind, external } of meta.outputs[file]?.imports ?? []) {
      if (!external && kind === 'import-statement') visit(imported);
    }
  };
  visit(entry);
  return seen;
}

/** The graph's files reached from `entry` through any import, `await import()` included (all it can ever load). */
function fullClosure(meta: Metafile, entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const { path: imported, external } of meta.outputs[file]?.imports ?? []) if (!external) visit(imported);
  };
  visit(entry);
  return seen;
}

/** The source modules bundled in these files. */
function inputsOf(meta: Metafile, files: Iterable<string>): string[] {
  return [...files].flatMap((file) => Object.keys(meta.outputs[file]?.inputs ?? {}));
}

const chunkNamed = (name: string) => (file: string) => new RegExp(`(^|/)chunks/${name}-[A-Z0-9]+\\.mjs$`).test(file);

describe('the production bundles: one module graph, split at its seams', function () {
  this.timeout(180_000);
  let root: TempRoot | undefined;
  let dist = '';
  let meta: Metafile;
  let probeMeta: Metafile;
  let bootstrapMeta: Metafile;
  // Metafile paths are relative to the build's working directory.
  const out = (file: string) => path.relative(dist, path.resolve(REPO_ROOT, file)).split(path.sep).join('/');

  before(async () => {
    root = await tempRoot('ultraplan-bundle-graph-');
    dist = path.join(root.dir, 'dist');
    // esbuild.mjs's own options (an ES module: loaded with import()).
    const { NODE_ENTRIES, bootstrapBuild, nodeGraph } = await import('../../esbuild.mjs');
    const shipped = await esbuild.build({ ...nodeGraph({ production: true, outdir: dist }), absWorkingDir: REPO_ROOT });
    meta = shipped.metafile;
    bootstrapMeta = (await esbuild.build({ ...bootstrapBuild({ production: true, outdir: dist }), absWorkingDir: REPO_ROOT })).metafile;
    const probed = await esbuild.build({
      ...nodeGraph({
        production: true,
        outdir: path.join(root.dir, 'probe'),
        entryPoints: { ...NODE_ENTRIES, probe: 'test/scripts/bundleGraph/probe.ts' },
      }),
      absWorkingDir: REPO_ROOT,
    });
    probeMeta = probed.metafile;
  });
  after(async () => {
    await root?.remove();
  });

  it('holds each module in exactly one file, and one zod', () => {
    for (const metafile of [meta, probeMeta]) {
      const seen = new Map<string, string>();
      for (const [file, output] of Object.entries(metafile.outputs)) {
        for (const input of Object.keys(output.inputs)) {
          assert.ok(!seen.has(input), `${input} is in both ${seen.get(input)} and ${file}`);
          seen.set(input, file);
        }
      }
      const zod = [...seen.keys()].filter((input) => /node_modules\/(.*\/)?zod\//.test(input));
      assert.ok(zod.length > 0, 'no zod in the graph');
      assert.deepEqual(
        zod.filter((input) => !input.startsWith('node_modules/zod/')),
        [],
        'a second zod (nested under another package)',
      );
    }
  });

  it('keeps the two programs apart: nothing the extension can load is of the service, nothing the server can load is of the extension', () => {
    const outputs = Object.keys(meta.outputs);
    const entry = (name: string) => {
      const file = outputs.find((f) => f.endsWith(`/${name}.mjs`));
      assert.ok(file, `no ${name}.mjs among ${outputs.join(', ')}`);
      return file;
    };
    const sources = (name: string) => inputsOf(meta, fullClosure(meta, entry(name))).filter((m) => m.startsWith('src/'));
    const extension = sources('extension');
    const server = sources('server');
    const room = (m: string) =>
      m
        .split('/')
        .slice(1, m.startsWith('src/agents/catalogue/') ? 3 : 2)
        .join('/');
    // What each program is made of, so a rule that passes because a program holds nothing cannot pass.
    assert.deepEqual([...new Set(extension.map(room))].sort(), ['agents/catalogue', 'client', 'core', 'extension']);
    assert.deepEqual([...new Set(server.map(room))].sort(), ['agents', 'agents/catalogue', 'core', 'service']);
    assert.deepEqual(
      extension.filter(
        (m) => /^src\/(service|cli|webview)\//.test(m) || (m.startsWith('src/agents/') && !m.startsWith('src/agents/catalogue/')),
      ),
      [],
      'the extension can load service or agent-runtime modules',
    );
    assert.deepEqual(
      server.filter((m) => /^src\/(extension|client|webview|cli)\//.test(m)),
      [],
      'the server can load extension or client modules',
    );
  });

  it(`the extension's first load stays under ${EXTENSION_FIRST_LOAD_LIMIT_KB} KB and holds none of the seams' modules`, () => {
    const outputs = Object.keys(meta.outputs);
    const extension = outputs.find((file) => file.endsWith('/extension.mjs'));
    assert.ok(extension, `no extension.mjs among ${outputs.join(', ')}`);
    const firstLoad = staticClosure(meta, extension);
    const kb = [...firstLoad].reduce((sum, file) => sum + (meta.outputs[file]?.bytes ?? 0), 0) / 1024;
    assert.ok(kb < EXTENSION_FIRST_LOAD_LIMIT_KB, `extension.mjs and its static imports are ${kb.toFixed(1)} KB`);
    const modules = inputsOf(meta, firstLoad);
    for (const lazy of ['src/agents/acp/acpAgent.ts', 'src/client/claudeWeb/backend.ts']) {
      assert.ok(!modules.includes(lazy), `${lazy} is loaded with extension.mjs`);
    }
    assert.ok(!modules.some((m) => m.includes('node_modules/@agentclientprotocol/sdk/')), 'the ACP SDK is loaded with extension.mjs');
    // Each seam is a chunk of its own, reached from the extension by import() only.
    const reachable = Object.values(meta.outputs).flatMap((o) => o.imports);
    for (const name of Object.values(LAZY_CHUNKS)) {
      const edges = reachable.filter((i) => chunkNamed(name)(i.path));
      assert.ok(edges.length > 0, `no chunk ${name}-*.mjs`);
      assert.deepEqual([...new Set(edges.map((i) => i.kind))], ['dynamic-import'], `${name} is imported statically somewhere`);
    }
  });

  it('the bootstrap (loaded at startup) holds only its own stateless modules and imports extension.mjs at run time', () => {
    const [file, output] = Object.entries(bootstrapMeta.outputs).find(([name]) => name.endsWith('/bootstrap.js')) ?? [];
    assert.ok(file && output);
    // Constants, the idle status item, the inbox's stand-in view and the look at a running
    // service (where it lives, one request over its socket): no class the rest checks with
    // instanceof and no module state (CHAT_STAND_IN is a Symbol.for), so its copy of them is
    // harmless; no zod, no session code.
    assert.deepEqual(Object.keys(output.inputs).sort(), [
      'src/core/node/servicePaths.ts',
      'src/core/stateKeys.ts',
      'src/extension/agentSetup/agentNotice.ts',
      'src/extension/bootstrap.ts',
      'src/extension/inbox/inboxStandIn.ts',
      'src/extension/liveSessionPeek.ts',
      'src/extension/status/idleStatus.ts',
    ]);
    const text = fs.readFileSync(path.resolve(REPO_ROOT, file), 'utf8');
    assert.ok(!text.includes('class '), 'the bootstrap defines a class');
    assert.match(text, /\bimport\(.*"dist\/extension\.mjs"\)/);
    assert.ok(output.bytes < 8 * 1024, `bootstrap.js is ${output.bytes} bytes`);
  });

  it('loads each seam only when it is first used, and a class is the same class on either side of it', async () => {
    const probeDir = path.join(root?.dir ?? '', 'probe');
    const loadLog = path.join(probeDir, 'loaded.log');
    fs.writeFileSync(loadLog, '');
    const { stdout } = await run(
      process.execPath,
      ['--import', path.join(REPO_ROOT, 'test', 'scripts', 'bundleGraph', 'loadLog.mjs'), path.join(probeDir, 'probe.mjs')],
      { cwd: probeDir, timeout: 60_000, env: { ...process.env, ULTRAPLAN_LOAD_LOG: loadLog } },
    );
    const steps = JSON.parse(stdout) as ProbeSteps;
    const lazy = (files: string[]) =>
      Object.entries(LAZY_CHUNKS)
        .filter(([, name]) => files.some(chunkNamed(name)))
        .map(([seam]) => seam)
        .sort();
    assert.ok(steps.atLoad.includes('probe.mjs'), `the load log missed the probe itself: ${steps.atLoad.join(', ')}`);
    assert.deepEqual(lazy(steps.atLoad), []);
    assert.deepEqual(lazy(steps.factoryMade), ['acpRuntime']);
    assert.equal(steps.agentStarted.label, 'Missing (ACP)');
    assert.match(steps.agentStarted.results.join('\n'), /Could not start Missing \(ACP\) \(\/nonexistent\/ultraplan-agent\): ENOENT/);
    assert.deepEqual(lazy(steps.claudeWeb.loaded), ['acpRuntime', 'claudeWeb']);
    // Thrown inside the backend's chunk, recognised by the probe's import of the same class.
    assert.deepEqual(steps.claudeWeb.error, { isClaudeWebError: true, reason: 'not_logged_in' });
    assert.deepEqual(steps.server.error, { isSessionsError: true, kind: 'transient' });
    // ES modules load each file once.
    const urls = fs.readFileSync(loadLog, 'utf8').split('\n').filter(Boolean);
    assert.equal(new Set(urls).size, urls.length, 'a file was loaded twice');
    const graphFiles = new Set(Object.keys(probeMeta.outputs).map((file) => path.basename(file)));
    assert.ok(steps.atEnd.filter((file) => graphFiles.has(path.basename(file))).length >= 5);
  });

  it('ships every file of the extension graph in the package (vsce ls over the production build)', async () => {
    // The package as scripts/package.mjs makes it: the manifest and .vscodeignore beside the build.
    const stage = path.join(root?.dir ?? '', 'stage');
    fs.mkdirSync(stage);
    for (const entry of ['package.json', '.vscodeignore', 'README.md', 'CHANGELOG.md', 'LICENSE', 'media', 'examples']) {
      fs.symlinkSync(path.join(REPO_ROOT, entry), path.join(stage, entry));
    }
    fs.cpSync(dist, path.join(stage, 'dist'), { recursive: true });
    const files = new Set((await listFiles({ cwd: stage, packageManager: PackageManager.None })).map((f) => f.split(path.sep).join('/')));
    const outputs = Object.keys(meta.outputs);
    const extension = outputs.find((file) => file.endsWith('/extension.mjs')) ?? '';
    // Everything extension.mjs can load, statically or through import().
    const loadable = new Set<string>();
    const visit = (file: string) => {
      if (loadable.has(file)) return;
      loadable.add(file);
      for (const i of meta.outputs[file]?.imports ?? []) if (!i.external) visit(i.path);
    };
    visit(extension);
    assert.ok(loadable.size >= 5, `only ${loadable.size} files reachable from extension.mjs`);
    assert.ok(files.has('dist/bootstrap.js'), 'dist/bootstrap.js is not in the package');
    for (const file of loadable) assert.ok(files.has(`dist/${out(file)}`), `dist/${out(file)} is not in the package`);
    assert.equal(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).main, './dist/bootstrap.js');
  });
});
