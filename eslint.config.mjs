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

/** no-restricted-imports for one layer: the modules it must not import, and why. */
function layer(files, banned) {
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: banned.map(({ group, message }) => ({ group, message, allowTypeImports: false })) },
      ],
    },
  };
}

const vscodeBan = { group: ['vscode'], message: 'Only src/extension talks to VS Code.' };
const nodeBan = { group: nodeBuiltins, message: 'This layer runs where Node is not (pure core, or the webview).' };
const up = (from, layers) => ({ group: layers.map((l) => `**/${l}/**`), message: `${from} does not import a higher layer.` });

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
  layer(['src/core/**/*.ts'], [vscodeBan, nodeBan, up('core', ['sessions', 'extension', 'webview'])]),
  layer(['src/sessions/**/*.ts'], [vscodeBan, up('sessions', ['extension', 'webview'])]),
  layer(['src/webview/**/*.ts'], [vscodeBan, nodeBan, up('webview', ['sessions', 'extension'])]),
  layer(['src/extension/**/*.ts'], [up('extension', ['webview'])]),
  {
    // The DOM belongs to the webview: core has no document or window to reach for.
    files: ['src/core/**/*.ts', 'src/sessions/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'document', message: 'No DOM outside src/webview.' },
        { name: 'window', message: 'No DOM outside src/webview.' },
      ],
    },
  },
);
