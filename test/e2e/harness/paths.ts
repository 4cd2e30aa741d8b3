import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** test-output/e2e/<suite>, created on first use. */
export function outputDir(suite: string): string {
  const dir = path.join(REPO_ROOT, 'test-output', 'e2e', suite);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
