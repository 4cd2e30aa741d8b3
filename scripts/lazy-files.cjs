// What the bundles load only when a feature first needs it (a require() inside a function). Each
// is bundled into a file of its own next to the bundles, and a bundle that imports it requires
// that file instead of holding it, so it neither weighs on loading the extension nor shares
// module state with it. One list for esbuild.mjs and every other build that bundles our sources
// (the e2e runner extension), so none of them inlines a lazy require.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..');

/** `module`: a package name, or one of our source files (from the repo root); `file`: dist/<file>.js. */
const LAZY_FILES = [
  // The ACP SDK, with its own copy of zod: inlined, its lazy require would leave zod half
  // initialised (src/sessions/acp/sdk.ts).
  { module: '@agentclientprotocol/sdk', file: 'vendor-acp-sdk' },
  // The ACP agent runtime, loaded when an ACP agent first starts (src/sessions/acp/acpAgentFactory.ts).
  { module: 'src/sessions/acp/acpAgent.ts', file: 'acp-agent' },
  // The Claude Code on the web backend, loaded when that backend is first used
  // (src/sessions/claudeWeb/backendLoader.ts).
  { module: 'src/sessions/claudeWeb/backend.ts', file: 'claude-web' },
  // The session server's HTTP client, loaded when a server backend is first made
  // (src/sessions/serverConnectionLoader.ts).
  { module: 'src/sessions/serverConnection.ts', file: 'server-client' },
  // The review runtime, loaded when a review first starts (src/sessions/review/reviewLoader.ts).
  { module: 'src/sessions/review/review.ts', file: 'review-runtime' },
];

const isSource = (entry) => entry.module.startsWith('src/');
const escape = (text) => text.replace(/[/.]/g, '\\$&');
/** A source file's real path without its extension: what a relative import of it resolves to. */
const sourceKey = (file) => fs.realpathSync(file).replace(/\.ts$/, '');

/**
 * Resolves every import of a lazy file to `<dir>/<file>.js`, external: `dir` is '.' for the
 * shipped bundles (a relative require: the files sit side by side in dist/), or an absolute dist/
 * folder for a bundle built elsewhere.
 * The lazy file's own entry point is left alone.
 */
function lazyFilesPlugin(dir = '.') {
  const target = (entry) => (dir === '.' ? `./${entry.file}.js` : path.join(dir, `${entry.file}.js`));
  return {
    name: 'lazy-files',
    setup(build) {
      const packages = LAZY_FILES.filter((e) => !isSource(e));
      build.onResolve({ filter: new RegExp(`^(${packages.map((e) => escape(e.module)).join('|')})$`) }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        return { path: target(packages.find((e) => e.module === args.path)), external: true };
      });
      const sources = new Map(LAZY_FILES.filter(isSource).map((e) => [sourceKey(path.join(REPO_ROOT, e.module)), e]));
      const names = [...sources.values()].map((e) => escape(path.basename(e.module, '.ts')));
      build.onResolve({ filter: new RegExp(`^\\.\\.?/(.*/)?(${names.join('|')})(\\.ts)?$`) }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const file = path.resolve(args.resolveDir, args.path).replace(/\.ts$/, '');
        const entry = fs.existsSync(`${file}.ts`) ? sources.get(sourceKey(`${file}.ts`)) : undefined;
        return entry ? { path: target(entry), external: true } : undefined;
      });
    },
  };
}

module.exports = { LAZY_FILES, lazyFilesPlugin };
