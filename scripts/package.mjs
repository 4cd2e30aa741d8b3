#!/usr/bin/env node
// `npm run package`: the production bundles and ultraplan-<version>.vsix, made with @vscode/vsce.
// Built in a staging folder, so the dev build in dist/ (with its source maps) stays as it is. The
// bundles hold every dependency, so the package has no node_modules (--no-dependencies), and
// .vscodeignore lets in only what the installed extension loads (`npx vsce ls` lists it).
//
//   node scripts/package.mjs [--out FILE]   writes the .vsix; prints its path on stdout
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What the build reads (linked) and what the package holds besides dist/ (copied: vsce reads files, not links). */
const BUILD_INPUTS = ['src', 'node_modules', 'tsconfig.json'];
const PACKAGE_FILES = ['package.json', '.vscodeignore', 'README.md', 'CHANGELOG.md', 'LICENSE', 'media', 'examples'];

export function packageExtension(out) {
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const target = path.resolve(out ?? path.join(repoRoot, `${manifest.name}-${manifest.version}.vsix`));
  const stage = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-package-'));
  try {
    for (const entry of BUILD_INPUTS) symlinkSync(path.join(repoRoot, entry), path.join(stage, entry));
    for (const entry of PACKAGE_FILES) cpSync(path.join(repoRoot, entry), path.join(stage, entry), { recursive: true });
    // esbuild.mjs as it is, run in the staging folder: its outdir 'dist' is the staging folder's.
    execFileSync(process.execPath, [path.join(repoRoot, 'esbuild.mjs'), '--production'], { cwd: stage, stdio: 'inherit' });
    mkdirSync(path.dirname(target), { recursive: true });
    const vsce = path.join(repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
    // vsce's summary goes to stderr here, so stdout carries only the path.
    execFileSync(process.execPath, [vsce, 'package', '--no-dependencies', '--out', target], {
      cwd: stage,
      stdio: ['ignore', process.stderr, 'inherit'],
    });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return target;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outArg = process.argv.indexOf('--out');
  const written = packageExtension(outArg > 0 ? process.argv[outArg + 1] : undefined);
  console.error(`${path.relative(process.cwd(), written)}: ${(statSync(written).size / 1024).toFixed(0)} KB`);
  console.log(written);
}
