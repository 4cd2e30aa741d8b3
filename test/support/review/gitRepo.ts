// A real git repository for review tests: main with two commits, a feature branch with one, and
// uncommitted work on top (staged and unstaged), so every review scope has something to show.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const APP_V1 = [
  'export function total(items: number[]): number {',
  '  let sum = 0;',
  '  for (let i = 0; i < items.length; i++) sum += items[i];',
  '  return sum;',
  '}',
  '',
].join('\n');
/** The branch's version: an off-by-one (line 3) and a division that the verifier should refute as a bug (line 8). */
export const APP_BRANCH = [
  'export function total(items: number[]): number {',
  '  let sum = 0;',
  '  for (let i = 0; i <= items.length; i++) sum += items[i];',
  '  return sum;',
  '}',
  '',
  'export function average(items: number[]): number {',
  '  return items.length ? total(items) / items.length : 0;',
  '}',
  '',
].join('\n');
/** Uncommitted: logs a token. */
export const LOGGER = ['export function login(token: string): void {', '  console.log(`token=${token}`);', '}', ''].join('\n');

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
  });
}

export class ReviewRepo {
  root = '';

  async open(): Promise<this> {
    this.root = await mkdtemp(path.join(tmpdir(), 'ultraplan-review-repo-'));
    git(this.root, 'init', '-q', '-b', 'main');
    await this.write('README.md', '# Shop\n');
    await this.write('src/app.ts', APP_V1);
    git(this.root, 'add', '.');
    git(this.root, 'commit', '-qm', 'first');
    await this.write('README.md', '# Shop\n\nSums prices.\n');
    git(this.root, 'commit', '-qam', 'docs');
    git(this.root, 'checkout', '-qb', 'feature');
    await this.write('src/app.ts', APP_BRANCH);
    git(this.root, 'commit', '-qam', 'average');
    // Uncommitted: one staged new file, one unstaged edit, a secret, an untracked note.
    await this.write('src/login.ts', LOGGER);
    git(this.root, 'add', 'src/login.ts');
    await this.write('README.md', '# Shop\n\nSums and averages prices.\n');
    await this.write('.env', 'API_TOKEN=do-not-send\n');
    git(this.root, 'add', '-f', '.env');
    await this.write('notes.txt', 'untracked idea\n');
    return this;
  }

  async write(file: string, text: string): Promise<void> {
    await mkdir(path.dirname(path.join(this.root, file)), { recursive: true });
    await writeFile(path.join(this.root, file), text);
  }

  async close(): Promise<void> {
    if (this.root) await rm(this.root, { recursive: true, force: true });
  }
}
