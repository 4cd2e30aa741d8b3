// A worker's workspace from a session's source, against a real git repository served by file://:
// the default branch, a branch, a tag and a commit are checked out into a scratch folder of the
// session's own; a session without a git source works in the worker's --workspace; a source that
// cannot be prepared is refused with a reason a person can act on, and leaves nothing behind.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { prepareWorkspace, WorkspaceSourceError } from '../../../src/sessions/server/workspaceSource';
import type { SessionMeta } from '../../../src/sessions/store';

describe('a worker prepares its workspace from the session source (real git, file://)', function () {
  this.timeout(60_000);
  let repo: string;
  let scratch: string;
  let workspace: string;
  let firstCommit: string;
  const logged: string[] = [];
  const places = () => ({ workspace, scratch, log: (line: string) => logged.push(line) });
  let count = 0;
  const meta = (sources: unknown[] | undefined): SessionMeta => ({
    id: `session_ws${++count}`,
    title: 'Plan it',
    created_at: new Date().toISOString(),
    environment_id: null,
    session_context: sources === undefined ? null : ({ sources } as SessionMeta['session_context']),
  });
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { encoding: 'utf8' }).trim();

  before(async () => {
    repo = await mkdtemp(path.join(tmpdir(), 'ultraplan-source-repo-'));
    scratch = await mkdtemp(path.join(tmpdir(), 'ultraplan-source-scratch-'));
    workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-source-ws-'));
    git('init', '--quiet', '--initial-branch=main');
    await writeFile(path.join(repo, 'app.ts'), 'v1\n');
    git('add', '.');
    git('commit', '--quiet', '-m', 'v1');
    firstCommit = git('rev-parse', 'HEAD');
    git('tag', 'release-1');
    git('checkout', '--quiet', '-b', 'feature');
    await writeFile(path.join(repo, 'app.ts'), 'feature\n');
    git('commit', '--quiet', '-am', 'feature');
    git('checkout', '--quiet', 'main');
    await writeFile(path.join(repo, 'app.ts'), 'v2\n');
    git('commit', '--quiet', '-am', 'v2');
  });
  after(async () => {
    for (const dir of [repo, scratch, workspace]) await rm(dir, { recursive: true, force: true });
  });

  it('clones the default branch, a branch, a tag and a commit, each into a folder of its session', async () => {
    const url = `file://${repo}`;
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'v2\n'],
      ['feature', 'feature\n'],
      ['release-1', 'v1\n'],
      [firstCommit, 'v1\n'],
    ];
    for (const [revision, text] of cases) {
      const session = meta([{ type: 'git_repository', url, ...(revision ? { revision } : {}) }]);
      const folder = await prepareWorkspace(session, places());
      assert.equal(folder, path.join(scratch, session.id));
      assert.equal(await readFile(path.join(folder, 'app.ts'), 'utf8'), text, `revision ${revision ?? '(default)'}`);
      // Prepared once: a second claim (after a worker died) reuses the checkout as it is.
      await writeFile(path.join(folder, 'app.ts'), 'edited by the agent\n');
      assert.equal(await prepareWorkspace(session, places()), folder);
      assert.equal(await readFile(path.join(folder, 'app.ts'), 'utf8'), 'edited by the agent\n');
    }
    assert.ok(logged.some((line) => line.includes(`workspace cloned from ${url} at feature`)));
  });

  it('a session without a git source works in the worker’s local workspace', async () => {
    assert.equal(await prepareWorkspace(meta(undefined), places()), workspace);
    assert.equal(await prepareWorkspace(meta([{ type: 'something_else' }]), places()), workspace);
  });

  it('a bad source is refused with a reason, and no partial checkout is left', async () => {
    const refused = async (sources: unknown[], reason: RegExp) => {
      const session = meta(sources);
      await assert.rejects(prepareWorkspace(session, places()), (err: unknown) => {
        assert.ok(err instanceof WorkspaceSourceError, String(err));
        assert.match(err.message, reason);
        return true;
      });
      assert.ok(!existsSync(path.join(scratch, session.id)), 'no folder under the session’s name');
    };
    await refused(
      [{ type: 'git_repository', url: `file://${repo}-missing` }],
      /^git clone of file:\/\/.*-missing failed: .*(does not exist|not appear to be a git repository)/,
    );
    await refused(
      [{ type: 'git_repository', url: `file://${repo}`, revision: 'no-such-branch' }],
      /the revision "no-such-branch" is not a branch, tag or commit of file:\/\//,
    );
    await refused([{ type: 'git_repository', url: 'ext::sh -c touch% /tmp/pwned' }], /is not a repository URL this worker fetches/);
    await refused([{ type: 'git_repository', url: '--upload-pack=touch /tmp/pwned' }], /is not a repository URL this worker fetches/);
    await refused([{ type: 'git_repository', url: repo }], /is not a repository URL this worker fetches/);
    await refused([{ type: 'git_repository', url: `file://${repo}`, revision: '--orphan' }], /is not a branch, tag or commit name/);
    await refused([{ type: 'git_repository' }], /needs a "url"/);
    await refused(
      [
        { type: 'git_repository', url: `file://${repo}` },
        { type: 'git_repository', url: `file://${repo}` },
      ],
      /names 2 git repositories/,
    );
    // A token in the URL is not repeated in the reason.
    await refused(
      [{ type: 'git_repository', url: 'https://user:s3cret-token@127.0.0.1:1/repo.git' }],
      /^git clone of https:\/\/127\.0\.0\.1:1\/repo\.git failed/,
    );
    const leftovers = readdirSync(scratch).filter((name) => name.includes('.partial-'));
    assert.deepEqual(leftovers, [], 'no partial clone is left in the scratch folder');
  });
});
