// Builds and stages what bench/extension.bench.ts installs in code-server, away from the shared
// dist/ (other engineers rebuild it while a bench runs): the bundles built by esbuild.mjs itself
// into a temp folder (dev or --production), an extension folder that is the repo with that dist/,
// and an empty extension as the activation baseline.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

export const REPO_ROOT = path.resolve(__dirname, '..');
export const EXTENSION_ID = 'ultraplan.ultraplan';
export const BASELINE_EXTENSION_ID = 'ultraplan.bench-empty-extension';

/** The bundles a build writes, as the manifest and the review panel load them. */
export const BUNDLES = [
  'bootstrap.js',
  'extension.js',
  'acp-agent.js',
  'claude-web.js',
  'server-client.js',
  'vendor-acp-sdk.js',
  'webview.js',
  'webview.css',
  'core.js',
  'server.js',
] as const;
export type BundleName = (typeof BUNDLES)[number];

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
 * Runs the repo's esbuild.mjs unchanged (so the flags are exactly the shipped ones) with its working
 * directory in `into`: its relative entry points resolve through symlinks to the repo's sources and
 * its `outdir: 'dist'` lands in `into/dist`. Returns that dist folder.
 */
export async function buildBundles(into: string, options: { production: boolean }): Promise<string> {
  await fs.promises.mkdir(into, { recursive: true });
  for (const entry of ['src', 'media', 'node_modules', 'tsconfig.json', 'package.json']) {
    await fs.promises.symlink(path.join(REPO_ROOT, entry), path.join(into, entry));
  }
  const args = [path.join(REPO_ROOT, 'esbuild.mjs'), ...(options.production ? ['--production'] : [])];
  await run(process.execPath, args, { cwd: into, timeout: 120_000 });
  const dist = path.join(into, 'dist');
  for (const name of BUNDLES) {
    if (!fs.existsSync(path.join(dist, name)))
      throw new Error(`esbuild.mjs${options.production ? ' --production' : ''} wrote no dist/${name}`);
  }
  return dist;
}

export interface BundleSize {
  bytes: number;
  gzipBytes: number;
}

/** Raw and gzip (default level, as a .vsix's deflate roughly compresses) size of each bundle. */
export function bundleSizes(dist: string): Record<BundleName, BundleSize> {
  const sizes = {} as Record<BundleName, BundleSize>;
  for (const name of BUNDLES) {
    const contents = fs.readFileSync(path.join(dist, name));
    sizes[name] = { bytes: contents.length, gzipBytes: gzipSync(contents).length };
  }
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
export async function stageExtension(into: string, options: { dist: string; dropActivationEvents?: readonly string[] }): Promise<string> {
  await fs.promises.mkdir(into, { recursive: true });
  for (const entry of await fs.promises.readdir(REPO_ROOT)) {
    if (entry === 'dist' || entry === 'package.json' || entry === '.git') continue;
    await fs.promises.symlink(path.join(REPO_ROOT, entry), path.join(into, entry));
  }
  await fs.promises.cp(options.dist, path.join(into, 'dist'), { recursive: true });
  const manifest = readManifest();
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
