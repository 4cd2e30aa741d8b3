// Builds and stages what bench/extension.bench.ts installs in code-server, away from the shared
// dist/ (other engineers rebuild it while a bench runs): the bundles built by esbuild.mjs itself
// into a temp folder (dev or --production), an extension folder that is the repo with that dist/,
// and an empty extension as the activation baseline. Another checkout (an earlier commit) can be
// built and staged the same way, to compare before and after in one run.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

export const REPO_ROOT = path.resolve(__dirname, '..');
export const EXTENSION_ID = 'ultraplan.ultraplan';
export const BASELINE_EXTENSION_ID = 'ultraplan.bench-empty-extension';

const run = promisify(execFile);

/** A temp folder removed by `remove()`; every staged thing lives under one. */
export interface TempRoot {
  dir: string;
  remove(): Promise<void>;
}

export async function tempRoot(prefix: string): Promise<TempRoot> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.promises.rm(dir, { recursive: true, force: true }) };
}

/**
 * Runs a checkout's esbuild.mjs unchanged (so the flags are exactly the shipped ones) with its
 * working directory in `into`: its relative entry points resolve through symlinks to that
 * checkout's sources and its `outdir: 'dist'` lands in `into/dist`. Returns that dist folder.
 * `repo` is this repository unless a bench compares another checkout (ULTRAPLAN_BENCH_BEFORE).
 */
export async function buildBundles(into: string, options: { production: boolean; repo?: string }): Promise<string> {
  const repo = options.repo ?? REPO_ROOT;
  await fs.promises.mkdir(into, { recursive: true });
  for (const entry of ['src', 'media', 'tsconfig.json', 'package.json', 'scripts']) {
    if (fs.existsSync(path.join(repo, entry))) await fs.promises.symlink(path.join(repo, entry), path.join(into, entry));
  }
  // The other checkout may have no node_modules of its own: the same dependencies as ours.
  const modules = fs.existsSync(path.join(repo, 'node_modules')) ? repo : REPO_ROOT;
  await fs.promises.symlink(path.join(modules, 'node_modules'), path.join(into, 'node_modules'));
  const args = [path.join(repo, 'esbuild.mjs'), ...(options.production ? ['--production'] : [])];
  await run(process.execPath, args, { cwd: into, timeout: 120_000 });
  const dist = path.join(into, 'dist');
  const main = readManifest(repo).main;
  if (typeof main !== 'string' || !fs.existsSync(path.join(into, main)))
    throw new Error(`esbuild.mjs${options.production ? ' --production' : ''} in ${repo} wrote no ${String(main)}`);
  return dist;
}

export interface BundleSize {
  bytes: number;
  gzipBytes: number;
}

function sizeOf(files: readonly string[]): BundleSize {
  const contents = files.map((file) => fs.readFileSync(file));
  return {
    bytes: contents.reduce((sum, c) => sum + c.length, 0),
    gzipBytes: contents.reduce((sum, c) => sum + gzipSync(c).length, 0),
  };
}

/** The files an ES module loads with it: itself and what it imports statically, transitively. */
function staticImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  for (const match of text.matchAll(/(?:from|import)\s*"(\.{1,2}\/[^"]+\.mjs)"/g)) {
    staticImports(path.resolve(path.dirname(file), match[1] ?? ''), seen);
  }
  return seen;
}

/**
 * Raw and gzip (default level, as a .vsix's deflate roughly compresses) size of each file a build
 * wrote at the top of dist/ (no source maps), plus what the extension loads when it is first
 * used: extension.mjs with every chunk it imports statically (a CommonJS build: extension.js,
 * whose files loaded on first use come later).
 */
export function bundleSizes(dist: string): Record<string, BundleSize> {
  const sizes: Record<string, BundleSize> = {};
  for (const name of fs.readdirSync(dist).sort()) {
    const file = path.join(dist, name);
    if (name.endsWith('.map') || !fs.statSync(file).isFile()) continue;
    sizes[name] = sizeOf([file]);
  }
  const esm = path.join(dist, 'extension.mjs');
  if (fs.existsSync(esm)) sizes['extension first load'] = sizeOf([...staticImports(esm)]);
  else if (sizes['extension.js']) sizes['extension first load'] = sizes['extension.js'];
  return sizes;
}

interface Manifest {
  version: string;
  activationEvents?: string[];
  [key: string]: unknown;
}

export function readManifest(folder = REPO_ROOT): Manifest {
  const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as Manifest;
  if (typeof manifest.version !== 'string') throw new Error(`${folder}/package.json has no version`);
  return manifest;
}

/**
 * An extension folder that is the repo (every top-level entry symlinked: media, examples, ...)
 * except for `dist`, which is `dist`'s copy, and package.json, copied with `dropActivationEvents`
 * taken out of activationEvents.
 */
export async function stageExtension(
  into: string,
  options: { dist: string; dropActivationEvents?: readonly string[]; repo?: string },
): Promise<string> {
  const repo = options.repo ?? REPO_ROOT;
  await fs.promises.mkdir(into, { recursive: true });
  for (const entry of await fs.promises.readdir(repo)) {
    if (entry === 'dist' || entry === 'package.json' || entry === '.git') continue;
    await fs.promises.symlink(path.join(repo, entry), path.join(into, entry));
  }
  await fs.promises.cp(options.dist, path.join(into, 'dist'), { recursive: true });
  const manifest = readManifest(repo);
  const drop = new Set(options.dropActivationEvents ?? []);
  const staged: Manifest = { ...manifest, activationEvents: (manifest.activationEvents ?? []).filter((e) => !drop.has(e)) };
  await fs.promises.writeFile(path.join(into, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`);
  return into;
}

/** The least an extension can be: activate() does nothing. Activated only by a command nobody runs. */
export async function stageBaselineExtension(into: string): Promise<string> {
  await fs.promises.mkdir(into, { recursive: true });
  const [publisher, name] = BASELINE_EXTENSION_ID.split('.') as [string, string];
  const manifest = {
    name,
    publisher,
    displayName: 'Empty extension (bench baseline)',
    version: '0.0.1',
    private: true,
    engines: { vscode: '^1.100.0' },
    main: './extension.js',
    activationEvents: ['onCommand:ultraplanBench.never'],
    extensionKind: ['workspace'],
  };
  await fs.promises.writeFile(path.join(into, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await fs.promises.writeFile(
    path.join(into, 'extension.js'),
    "'use strict';\nexports.activate = function activate() {};\nexports.deactivate = function deactivate() {};\n",
  );
  return into;
}

/**
 * Points code-server's extensions folder (made by startCodeServer) at staged folders: replaces
 * the symlink of the extension with that id and adds the others. Done before a browser connects,
 * which is when code-server scans the folder and starts the extension host.
 */
export async function installStaged(
  extensionsDir: string,
  staged: ReadonlyArray<{ id: string; version: string; folder: string }>,
): Promise<void> {
  const existing = await fs.promises.readdir(extensionsDir);
  for (const { id, version, folder } of staged) {
    // `<id>-<version>` only: "ultraplan.ultraplan-" also starts the test runner's folder name.
    for (const entry of existing) {
      if (entry.startsWith(`${id}-`) && /^\d/.test(entry.slice(id.length + 1)))
        await fs.promises.rm(path.join(extensionsDir, entry), { recursive: true, force: true });
    }
    await fs.promises.symlink(folder, path.join(extensionsDir, `${id}-${version}`));
  }
}
