// Rewrites relative import specifiers after `git mv`: every file is read at its new path, its
// specifiers are resolved against its OLD path, mapped through the move list, and made relative to
// its new path again. Run with the list of moves (old new per line).
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { execSync } from 'node:child_process';
import path from 'node:path';
const moves = readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => l.trim().split(/\s+/));
const strip = (p) => p.replace(/\.(ts|mjs|js)$/, '');
const oldToNew = new Map(moves.map(([a, b]) => [strip(a), strip(b)]));
const newToOld = new Map(moves.map(([a, b]) => [b, a]));
const files = execSync("git ls-files -co --exclude-standard -- '*.ts' '*.mjs' '*.md'", { encoding: 'utf8' }).trim().split('\n').filter((f) => existsSync(f));
let changed = 0;
for (const file of files) {
  const oldFile = newToOld.get(file) ?? file;
  const text = readFileSync(file, 'utf8');
  const rewrite = (spec) => {
    if (!spec.startsWith('.')) return spec;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(oldFile), spec));
    const mapped = oldToNew.get(strip(target));
    // Unmoved target: still relative from the new location.
    const dest = mapped ?? target;
    let rel = path.posix.relative(path.posix.dirname(file), dest);
    if (!rel.startsWith('.')) rel = `./${rel}`;
    const ext = spec.match(/\.(ts|mjs|js)$/)?.[0];
    if (ext && !rel.endsWith(ext)) rel += ext;
    if (mapped === undefined && path.posix.dirname(file) === path.posix.dirname(oldFile)) return spec;
    return rel;
  };
  if (!file.endsWith('.ts') && !file.endsWith('.mjs')) continue;
  const out = text.replace(/(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|require\(\s*)(['"])(\.[^'"]*)\2/g, (m, pre, q, spec) => `${pre}${q}${rewrite(spec)}${q}`);
  if (out !== text) {
    writeFileSync(file, out);
    changed++;
  }
}
console.log(`rewrote imports in ${changed} files`);
