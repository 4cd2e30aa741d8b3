// Builds every bundle the project ships. One file so the entry points and their
// platforms (node for the extension host and server, browser for the webview) stay in one place.
import * as esbuild from 'esbuild';
import { chmod } from 'node:fs/promises';

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

// Packages loaded only when a feature first needs them (a require() inside a function): each is
// bundled into a file of its own next to the bundles, and the bundles require that file, so it
// neither weighs on loading the extension nor shares module state with it.
const vendors = {
  '@agentclientprotocol/sdk': 'vendor-acp-sdk',
};
/** @type {esbuild.Plugin} */
const vendorFiles = {
  name: 'vendor-files',
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(vendors).map((v) => v.replace(/[/.]/g, '\\$&')).join('|')})$`);
    build.onResolve({ filter }, (args) => ({ path: `./${vendors[args.path]}.js`, external: true }));
  },
};
const vendorTargets = Object.entries(vendors).map(([pkg, name]) => ({
  ...common,
  entryPoints: { [name]: pkg },
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outdir: 'dist',
}));

/** @type {esbuild.BuildOptions[]} */
const targets = [
  ...vendorTargets,
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
    plugins: [vendorFiles],
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
    entryPoints: { server: 'src/sessions/cli.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [vendorFiles],
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
  // A bundle that requires a vendor file needs it next to it.
  const selected = only && named.some((t) => t.plugins?.includes(vendorFiles)) ? [...vendorTargets, ...named] : named;
  await Promise.all(selected.map((t) => esbuild.build(t)));
  if (selected.some((t) => Object.keys(t.entryPoints).includes('server'))) await chmod('dist/server.js', 0o755);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
