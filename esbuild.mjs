// Builds every bundle the project ships. One file so the entry points and their
// platforms (node for the extension host and server, browser for the webview) stay in one place.
import * as esbuild from 'esbuild';
import { chmod, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
// `--only=server` builds the one build that holds that entry (tests rebuild dist/server.mjs with its graph);
// `--only=server,review-page` each of those (the server image).
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  legalComments: 'none',
};

/**
 * Our Node programs as one ES module graph: the extension (VS Code resolves `import 'vscode'` in an
 * extension's ES modules since 1.100; docs/packaging.md) and the session server. esbuild splits
 * it: each entry is a file, code behind an `await import()` is a chunk loaded at that call, and a
 * module used from several places is in one shared chunk, so every module and class exists once.
 * A new Node entry point goes in this list.
 */
export const NODE_ENTRIES = {
  // Imported by dist/bootstrap.js when the extension is first used.
  extension: 'src/extension/extension.ts',
  // package.json `bin`, and the local session service the extension starts (its hashbang comes from cli.ts).
  server: 'src/service/cli.ts',
  // ultraplan-review, the review's command line for CI (package.json `bin`).
  review: 'src/cli/reviewCli.ts',
};

/** The options of that graph; tests build it with a probe entry added. */
export function nodeGraph({ entryPoints = NODE_ENTRIES, outdir = 'dist', production: minify = production } = {}) {
  return {
    ...common,
    sourcemap: minify ? false : 'linked',
    minify,
    entryPoints,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    splitting: true,
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    external: ['vscode'],
    metafile: true,
    // CommonJS packages bundled into these ES modules (node-postgres) require Node's built-ins;
    // an ES module has no `require`, so each file gets one of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  };
}

/**
 * package.json `main`, loaded at every startup: CommonJS, which VS Code requires on the extension
 * host's thread (an ES module main pays a trip through Node's module hooks thread for each file;
 * docs/packaging.md). About 3 KB, importing only vscode; it imports dist/extension.mjs on first use.
 */
export function bootstrapBuild({ outdir = 'dist', production: minify = production } = {}) {
  return {
    ...common,
    sourcemap: minify ? false : 'linked',
    minify,
    entryPoints: { bootstrap: 'src/extension/bootstrap.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    outdir,
    metafile: true,
  };
}

/** A page's script for the browser, with its stylesheet and the codicon font beside it in dist/. */
const browserPage = {
  ...common,
  platform: 'browser',
  format: 'iife',
  target: 'es2022',
  outdir: 'dist',
  loader: { '.ttf': 'file' },
  assetNames: '[name]',
};

/** @type {esbuild.BuildOptions[]} */
const targets = [
  nodeGraph(),
  bootstrapBuild(),
  {
    ...common,
    entryPoints: { core: 'src/core/index.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outdir: 'dist',
  },
  {
    ...browserPage,
    // main.ts imports media/panel.css (with the codicon font): emitted as dist/webview.css plus the
    // font file, both under the panel's localResourceRoots.
    entryPoints: { webview: 'src/webview/main.ts' },
  },
  {
    ...browserPage,
    // The review page ultraplan-server serves at /review/<id> (src/service/http/reviewPage/): the
    // panel's view with a host in the page. Loaded as files (not inlined), under a nonce-only CSP.
    entryPoints: { 'review-page': 'src/webview/page/main.ts' },
  },
];

async function main() {
  if (watch) {
    const contexts = await Promise.all(targets.map((t) => esbuild.context(t)));
    await Promise.all(contexts.map((c) => c.watch()));
    return;
  }
  const selected = only ? targets.filter((t) => Object.keys(t.entryPoints).some((entry) => only.includes(entry))) : targets;
  const unknown = only?.filter((name) => !targets.some((t) => name in t.entryPoints)) ?? [];
  if (unknown.length > 0) throw new Error(`--only: no bundle ${unknown.join(', ')}`);
  const results = await Promise.all(selected.map(buildAndWrite));
  if (selected.includes(targets[0])) {
    await removeStaleChunks(results[selected.indexOf(targets[0])].metafile);
    for (const bin of ['server', 'review']) await chmod(`dist/${bin}.mjs`, 0o755);
  }
}

let tempCount = 0;

/**
 * Builds, then writes each file under a temporary name and renames it: tests rebuild the graph
 * while other test processes run its files, and a reader must never see half a file.
 */
async function buildAndWrite(options) {
  const result = await esbuild.build({ ...options, write: false });
  for (const file of result.outputFiles) {
    assertInlineSafe(file);
    await mkdir(path.dirname(file.path), { recursive: true });
    // Unique per write: bundles built in parallel emit the same asset (codicon.ttf) to one path.
    const temp = `${file.path}.${process.pid}.${++tempCount}.tmp`;
    await writeFile(temp, file.contents);
    await rename(temp, file.path);
  }
  return result;
}

/**
 * The review panel's page carries webview.js and webview.css in itself (reviewPanelHtml.ts): a
 * bundle holding text that could end or reopen its element there is refused, so a library update
 * cannot slip one in (esbuild writes `</script` and `</style` as `<\/script` and `<\/style`).
 */
function assertInlineSafe(file) {
  const name = path.basename(file.path);
  const unsafe = name === 'webview.js' ? /<\/?script/i : name === 'webview.css' ? /<\/style/i : undefined;
  const found = unsafe?.exec(file.text);
  if (found) throw new Error(`${name} holds "${found[0]}" at ${found.index}: it cannot be put in the panel's page as it is`);
}

/**
 * Chunk names carry a content hash, so an earlier build's chunks would stay beside the new ones.
 * Removed after the build, not before: another process (a test) may be running the same graph.
 */
async function removeStaleChunks(metafile) {
  const written = new Set(Object.keys(metafile.outputs).map((file) => path.resolve(file)));
  const dir = path.resolve('dist', 'chunks');
  for (const name of await readdir(dir)) {
    const file = path.join(dir, name);
    // Another build's file on its way in (buildAndWrite) is not stale.
    if (!written.has(file) && !name.endsWith('.tmp')) await rm(file, { force: true });
  }
}

// Run as a script (node esbuild.mjs); imported, it only gives its options.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
