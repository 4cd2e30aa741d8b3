// No module in src/ imports itself through others, types included: a cycle is where two modules
// stop having one job each (backends and the ACP agent source once needed each other for a type).
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '..', '..', 'src');

function sourceFiles(dir: string, into: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) sourceFiles(full, into);
    else if (full.endsWith('.ts')) into.push(full);
  }
  return into;
}

/** Relative imports and re-exports of a file, resolved to files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]/g)) {
    const target = path.join(path.dirname(file), match[1]!);
    if (existsSync(`${target}.ts`)) found.push(`${target}.ts`);
    else if (existsSync(path.join(target, 'index.ts'))) found.push(path.join(target, 'index.ts'));
  }
  return found;
}

function importCycles(files: readonly string[]): string[] {
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const cycles = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const done = new Set<string>();
  const visit = (file: string): void => {
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (onStack.has(next)) cycles.add([...stack.slice(stack.indexOf(next)), next].map((f) => path.relative(SRC, f)).join(' -> '));
      else if (!done.has(next)) visit(next);
    }
    stack.pop();
    onStack.delete(file);
    done.add(file);
  };
  for (const file of files) if (!done.has(file)) visit(file);
  return [...cycles];
}

describe('src/ has no import cycles', () => {
  it('finds none', () => {
    assert.deepEqual(importCycles(sourceFiles(SRC)), []);
  });

  it('finds a cycle of type imports between two files', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-cycle-'));
    try {
      writeFileSync(path.join(dir, 'a.ts'), "import type { B } from './b';\nexport interface A { b: B }\n");
      writeFileSync(path.join(dir, 'b.ts'), "import type { A } from './a';\nexport interface B { a: A }\n");
      assert.equal(importCycles([path.join(dir, 'a.ts'), path.join(dir, 'b.ts')]).length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
