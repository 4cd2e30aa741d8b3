import * as fs from 'node:fs';
import * as path from 'node:path';
import { FLOOR, selectedVersion } from '../../../scripts/code-server-config.cjs';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** test-output/e2e/<suite> (<suite>@<version> on a code-server other than the floor), created on first use. */
export function outputDir(suite: string): string {
  const version = selectedVersion();
  const dir = path.join(REPO_ROOT, 'test-output', 'e2e', version === FLOOR ? suite : `${suite}@${version}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
