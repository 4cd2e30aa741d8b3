// A worker's workspace from a session's source, against a real git repository served by file://:
// the default branch, a branch, a tag and a commit are checked out into a scratch folder of the
// session's own; a session without a git source works in the worker's --workspace; a source that
// cannot be prepared is refused with a reason a person can act on, and leaves nothing behind.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { prepareWorkspace, WorkspaceSourceError } from '../../../src/service/workers/workspaceSource';
import type { SessionMeta } from '../../../src/service/store/sessionStore';
import type { GitSourcePolicy } from '../../../src/core/gitSource';
import { createServer, type Server } from 'node:net';

describe('a worker prepares its workspace from the session source (real git, file://)', function () {
  this.timeout(60_000);
  let repo: string;
  let scratch: string;
  let workspace: string;
  let firstCommit: string;
  const logged: string[] = [];
  // file:// as on a single-user worker (--allow-file-sources); the policy's own refusals are tested below.
  const places = (sources: GitSourcePolicy = { hosts: ['*'], allowFile: true }) => ({
    workspace,
    scratch,
    log: (line: string) => logged.push(line),
    sources,
  });
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

  it("the worker's own git config runs no hook while it clones: plain git clone runs its post-checkout hook, the worker's does not", async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'ultraplan-source-home-'));
    const marker = path.join(home, 'post-checkout-ran');
    await mkdir(path.join(home, 'hooks'));
    await writeFile(path.join(home, 'hooks', 'post-checkout'), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
    await writeFile(path.join(home, '.gitconfig'), `[core]\n\thooksPath = ${path.join(home, 'hooks')}\n`);
    const savedHome = process.env.HOME;
    process.env.HOME = home;
    try {
      const plainEnv = { ...process.env };
      for (const key of Object.keys(plainEnv)) if (key.startsWith('GIT_')) delete plainEnv[key];
      execFileSync('git', ['clone', '--quiet', `file://${repo}`, path.join(home, 'plain')], { env: plainEnv });
      assert.ok(existsSync(marker), 'plain git clone did not run the hook: the probe would prove nothing');
      await rm(marker);
      const folder = await prepareWorkspace(meta([{ type: 'git_repository', url: `file://${repo}` }]), places());
      assert.equal(await readFile(path.join(folder, 'app.ts'), 'utf8'), 'v2\n');
      assert.equal(existsSync(marker), false, 'the hook ran while the worker cloned');
    } finally {
      process.env.HOME = savedHome;
      await rm(home, { recursive: true, force: true });
    }
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
    await refused([{ type: 'git_repository', url: 'ext::sh -c touch% /tmp/pwned' }], /is not a repository URL/);
    await refused([{ type: 'git_repository', url: '--upload-pack=touch /tmp/pwned' }], /is not a repository URL/);
    await refused([{ type: 'git_repository', url: repo }], /is not a repository URL/);
    await refused([{ type: 'git_repository', url: `file://${repo}`, revision: '--orphan' }], /is not a branch, tag or commit name/);
    await refused([{ type: 'git_repository' }], /needs a "url"/);
    await refused(
      [
        { type: 'git_repository', url: `file://${repo}` },
        { type: 'git_repository', url: `file://${repo}` },
      ],
      /names 2 git repositories/,
    );
    // A token in the URL is refused, and not repeated in the reason.
    await refused(
      [{ type: 'git_repository', url: 'https://user:s3cret-token@127.0.0.1:1/repo.git' }],
      /^(?!.*s3cret).*carries credentials/,
    );
    const leftovers = readdirSync(scratch).filter((name) => name.includes('.partial-'));
    assert.deepEqual(leftovers, [], 'no partial clone is left in the scratch folder');
  });

  it('on a server other people use: no file://, only the hosts it allows, and an unreachable host reads the same whatever its port did', async () => {
    const rejection = async (url: string, sources: GitSourcePolicy): Promise<string> => {
      const session = meta([{ type: 'git_repository', url }]);
      let message = '';
      await assert.rejects(prepareWorkspace(session, places(sources)), (err: unknown) => {
        assert.ok(err instanceof WorkspaceSourceError, String(err));
        message = err.message;
        return true;
      });
      assert.ok(!existsSync(path.join(scratch, session.id)));
      return message;
    };
    const multiUser: GitSourcePolicy = { hosts: ['git.example.com'], allowFile: false };
    assert.match(await rejection(`file://${repo}`, multiUser), /file:\/\/ sources are refused/);
    assert.match(await rejection('https://169.254.169.254/latest/meta-data.git', multiUser), /the git host 169\.254\.169\.254 is not one/);
    assert.match(await rejection('git@internal.corp:team/repo.git', multiUser), /the git host internal\.corp is not one/);
    assert.match(await rejection('git://git.example.com/repo.git', multiUser), /is not a repository URL/);
    assert.match(
      await rejection('https://git.example.com/repo.git', { hosts: [], allowFile: false }),
      /the git host git\.example\.com is not one/,
    );
    // A port that is closed and one that answers something other than git: one message for both.
    const listening: Server = createServer((socket) => socket.end('not git\r\n'));
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const open = (listening.address() as { port: number }).port;
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as { port: number }).port;
        probe.close(() => resolve(port));
      });
    });
    try {
      const anyLocal: GitSourcePolicy = { hosts: [`127.0.0.1:${open}`, `127.0.0.1:${closed}`], allowFile: false };
      const atOpen = await rejection(`http://127.0.0.1:${open}/repo.git`, anyLocal);
      const atClosed = await rejection(`http://127.0.0.1:${closed}/repo.git`, anyLocal);
      assert.equal(atOpen.replace(String(open), 'PORT'), atClosed.replace(String(closed), 'PORT'));
      assert.match(atOpen, /could not be reached/);
    } finally {
      listening.close();
    }
  });
});
