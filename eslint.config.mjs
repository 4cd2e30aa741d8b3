// Lint for the whole repository. The layer rules are the point: a file's folder says what it may
// import (docs/architecture.md), and this is where that is enforced.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'node:*',
  'fs',
  'fs/*',
  'path',
  'os',
  'child_process',
  'crypto',
  'http',
  'https',
  'net',
  'stream',
  'url',
  'util',
  'events',
  'worker_threads',
  'zlib',
];

/**
 * One layer's rule: the modules it must not import, and why. An `await import()` is held to the
 * same rooms (no-restricted-imports sees only static imports): each room becomes a selector on the
 * import expression's literal source.
 */
function layer(files, banned) {
  const dynamic = banned
    .filter(({ rooms }) => rooms)
    .flatMap(({ rooms, message, keep = [] }) =>
      rooms.map((room) => ({
        selector: `ImportExpression > Literal[value=/(^|\\/)${room}(\\/${keep.map((k) => `(?!${k}(\\/|$))`).join('')}|$)/]`,
        message,
      })),
    );
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: banned.map(({ group, message }) => ({ group, message, allowTypeImports: false })) },
      ],
      'no-restricted-syntax': ['error', ...dynamic],
    },
  };
}

const vscodeBan = { group: ['vscode'], message: 'Only src/extension talks to VS Code.' };
const nodeBan = { group: nodeBuiltins, message: 'This layer runs where Node is not (pure core, or the webview).' };
/** Imports of another room: `rooms` are folders of src/ this layer must not reach. */
const rooms = (from, banned, message) => ({
  group: banned.flatMap((room) => [`**/${room}`, `**/${room}/**`]),
  rooms: banned,
  message: `${from} ${message}`,
});
// The two programs and what they share (docs/architecture.md): the extension (extension, client,
// webview) and the session service (service, agents) meet only in core; the review command line
// (cli) is the one place that holds both, as it runs agents in-process.
const PROGRAM_ROOMS = ['client', 'service', 'agents', 'extension', 'webview', 'cli'];
const except = (list, ...keep) => list.filter((room) => !keep.includes(room));
// The catalogue of known agents (ids, labels, commands, install) is what a window may know of the
// agents; their runtime stays in the service.
const agentsButCatalogue = {
  group: ['**/agents/**', '!**/agents/catalogue', '!**/agents/catalogue/**'],
  rooms: ['agents'],
  keep: ['catalogue'],
  message: 'The extension knows agents through src/agents/catalogue only; their runtime runs in the service.',
};

export default tseslint.config(
  // What git ignores (build output, caches, test output) is not ours to lint.
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/out/**',
      '.cache/**',
      'test-output/**',
      '**/*.vsix',
      '.vscode-test/**',
      '.ultraplan/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Fixtures and scripts require CommonJS helpers on purpose.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', 'scripts/**', 'test/fixtures/**'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // Tests may hold loosely typed fixtures; product code may not.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  layer(
    ['src/core/**/*.ts'],
    [vscodeBan, nodeBan, rooms('core', [...PROGRAM_ROOMS, 'node'], 'is pure: Node-only helpers live in core/node.')],
  ),
  layer(['src/core/node/**/*.ts'], [vscodeBan, rooms('core/node', PROGRAM_ROOMS, 'is shared by both programs and imports neither.')]),
  layer(['src/agents/**/*.ts'], [vscodeBan, rooms('agents', except(PROGRAM_ROOMS, 'agents'), 'run in the service and import only core.')]),
  layer(
    ['src/service/**/*.ts'],
    [vscodeBan, rooms('service', except(PROGRAM_ROOMS, 'service', 'agents'), 'imports only agents and core.')],
  ),
  layer(
    ['src/client/**/*.ts'],
    [vscodeBan, rooms('client', except(PROGRAM_ROOMS, 'client', 'agents'), 'imports only core.'), agentsButCatalogue],
  ),
  layer(
    ['src/extension/**/*.ts'],
    [rooms('extension', ['service', 'webview', 'cli'], 'reaches sessions only through src/client.'), agentsButCatalogue],
  ),
  layer(
    ['src/webview/**/*.ts'],
    [vscodeBan, nodeBan, rooms('webview', except(PROGRAM_ROOMS, 'webview'), 'talks to its host only through messages.')],
  ),
  layer(['src/cli/**/*.ts'], [vscodeBan, rooms('cli', ['extension', 'webview'], 'is a Node program, not the editor.')]),
  {
    // The DOM belongs to the webview: core has no document or window to reach for.
    files: ['src/core/**/*.ts', 'src/client/**/*.ts', 'src/service/**/*.ts', 'src/agents/**/*.ts', 'src/cli/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'document', message: 'No DOM outside src/webview.' },
        { name: 'window', message: 'No DOM outside src/webview.' },
      ],
    },
  },
);
