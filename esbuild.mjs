// Builds every bundle the project ships. One file so the entry points and their
// platforms (node for the extension host and server, browser for the webview) stay in one place.
import * as esbuild from 'esbuild';
import { chmod } from 'node:fs/promises';
import lazyFilesConfig from './scripts/lazy-files.cjs';

const { LAZY_FILES, lazyFilesPlugin } = lazyFilesConfig;

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
// `--only=server` builds one bundle (tests rebuild dist/server.js without the other entries).
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  legalComments: 'none',
};

// Files loaded only when a feature first needs them (scripts/lazy-files.cjs): each built on its
// own, and required by the bundles that import it.
const lazyFiles = lazyFilesPlugin();
const lazyTargets = LAZY_FILES.map(({ module, file }) => ({
  ...common,
  entryPoints: { [file]: module },
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  plugins: [lazyFiles],
  outdir: 'dist',
}));

/** @type {esbuild.BuildOptions[]} */
const targets = [
  ...lazyTargets,
  {
    // The entry VS Code loads at startup (package.json main): small, it loads dist/extension.js
    // when the extension is first used.
    ...common,
    entryPoints: { bootstrap: 'src/extension/bootstrap.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    outdir: 'dist',
  },
  {
    ...common,
    entryPoints: { extension: 'src/extension/extension.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    plugins: [lazyFiles],
    outdir: 'dist',
  },
  {
    ...common,
    entryPoints: { core: 'src/core/index.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outdir: 'dist',
  },
  {
    ...common,
    entryPoints: { server: 'src/sessions/server/cli.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [lazyFiles],
    outdir: 'dist',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    // ultraplan-review, the review's command line for CI (package.json bin).
    ...common,
    entryPoints: { review: 'src/sessions/review/cli.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [lazyFiles],
    outdir: 'dist',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    ...common,
    entryPoints: { webview: 'src/webview/main.ts' },
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    outdir: 'dist',
    // main.ts imports media/panel.css (with the codicon font): emitted as dist/webview.css plus the
    // font file, both under the panel's localResourceRoots.
    loader: { '.ttf': 'file' },
    assetNames: '[name]',
  },
];

async function main() {
  if (watch) {
    const contexts = await Promise.all(targets.map((t) => esbuild.context(t)));
    await Promise.all(contexts.map((c) => c.watch()));
    return;
  }
  const named = only ? targets.filter((t) => Object.keys(t.entryPoints).includes(only)) : targets;
  if (named.length === 0) throw new Error(`--only=${only}: no such bundle`);
  // A bundle that requires a lazy file needs it next to it.
  const selected = only && named.some((t) => t.plugins?.includes(lazyFiles)) ? [...new Set([...lazyTargets, ...named])] : named;
  await Promise.all(selected.map((t) => esbuild.build(t)));
  for (const bin of ['server', 'review'])
    if (selected.some((t) => Object.keys(t.entryPoints).includes(bin))) await chmod(`dist/${bin}.js`, 0o755);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
