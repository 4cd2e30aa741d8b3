// The house keeps its source files small enough to read whole: none in src/ over 500 lines.
import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';

const SRC = path.resolve(__dirname, '..', '..', 'src');
const MAX_LINES = 500;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|cts)$/.test(entry.name) ? [full] : [];
  });
}

describe('source file size', () => {
  it(`no file in src/ is over ${MAX_LINES} lines`, () => {
    const files = sourceFiles(SRC);
    assert.ok(files.length > 100, `found ${files.length} source files`);
    const over = files
      .map((file) => ({ file: path.relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines}`);
    assert.deepEqual(over, []);
  });
});
