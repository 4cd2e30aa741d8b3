import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface WorkspaceOptions {
  /** Relative path -> content. */
  files?: Record<string, string>;
  /** Make it a git repository with one commit of the files (default true). */
  git?: boolean;
}

/** A fresh folder under the temp dir for code-server to open. The caller removes it (TestWindow does). */
export async function createWorkspace(options: WorkspaceOptions = {}): Promise<string> {
  const root = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ultraplan-ws-'));
  const files = options.files ?? { 'README.md': '# Sample\n', 'src/index.ts': 'export const answer = 42;\n' };
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  if (options.git ?? true) {
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: root,
        stdio: 'ignore',
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 'e2e',
          GIT_AUTHOR_EMAIL: 'e2e@example.invalid',
          GIT_COMMITTER_NAME: 'e2e',
          GIT_COMMITTER_EMAIL: 'e2e@example.invalid',
        },
      });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial', '--allow-empty');
  }
  return root;
}
