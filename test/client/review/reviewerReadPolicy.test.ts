// A hostile reviewer: the fake ACP agent, run as a finder of the real review fleet on a real
// session host, asks fs/read_text_file for the secrets the review withholds from its diff (.env in
// another case, a symlink and a hard link to it, a kubeconfig, the git folder) and for a plain file. The
// secrets are refused with a message that says why, the plain file is read, and the review still
// completes. The same agent in a planning session (no review) reads .env: the rule is the review's.
import { strict as assert } from 'node:assert';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { createAcpAgentFactory } from '../../../src/agents/acp/acpAgentFactory';
import { runReviewFleet } from '../../../src/client/review/fleet';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { InProcessBackend } from '../../../src/service/inProcessBackend';
import { DEFAULT_AND_PLAN_MODES } from '../../support/acpFixtures';
import { fakeRun, readAgentRecord, waitForRecord, type FakeRun } from '../../support/fakeAcpAgent';

const SECRET = `API_TOKEN=reviewer-must-not-see-${process.pid}`;
const WITHHELD = [
  '{{cwd}}/.env',
  '{{cwd}}/.ENV',
  '{{cwd}}/notes-link.txt',
  '{{cwd}}/deploy/prod.kubeconfig',
  '{{cwd}}/.git/config',
  '{{cwd}}/notes-hard.txt',
];

describe('a reviewer agent cannot read what the review withholds', function () {
  this.timeout(60_000);
  let run: FakeRun | undefined;
  let backend: InProcessBackend | undefined;

  afterEach(async () => {
    await backend?.dispose();
    await run?.cleanup();
    backend = undefined;
    run = undefined;
  });

  async function open(): Promise<{ run: FakeRun; backend: InProcessBackend }> {
    run = await fakeRun({
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [
        [
          ...WITHHELD.map((file) => ({ readFile: { path: file } })),
          { readFile: { path: '{{cwd}}/README.md' } },
          { chunk: '```json\n{"findings": []}\n```' },
        ],
      ],
    });
    await writeFile(path.join(run.workspace, '.env'), `${SECRET}\n`);
    await symlink('.env', path.join(run.workspace, 'notes-link.txt'));
    await link(path.join(run.workspace, '.env'), path.join(run.workspace, 'notes-hard.txt'));
    await mkdir(path.join(run.workspace, 'deploy'));
    await writeFile(path.join(run.workspace, 'deploy', 'prod.kubeconfig'), `token: ${SECRET}\n`);
    await mkdir(path.join(run.workspace, '.git'));
    await writeFile(path.join(run.workspace, '.git', 'config'), `[filter "x"]\n  clean = ${SECRET}\n`);
    const factory = await createAcpAgentFactory({ argv: run.argv, cwd: run.workspace, label: 'Fake (ACP)', log: () => undefined });
    backend = new InProcessBackend({ host: new SessionHost({ agentFactory: factory }), label: 'Fake (ACP)' });
    return { run, backend };
  }

  it('fs/read_text_file of .env, .ENV, a symlink to it, a kubeconfig, .git/config and a hard link to .env is refused; README is read; the review completes', async () => {
    const opened = await open();
    const result = await runReviewFleet({
      change: { files: [], scopeText: 'a test change' },
      sources: [{ label: 'Fake (ACP)', backend: opened.backend }],
      finders: 1,
      signal: new AbortController().signal,
    });
    assert.equal(result.cancelled, false);
    assert.deepEqual(result.reviewers, [{ label: 'Fake (ACP) #1', role: 'finder', ok: true, findings: 0 }]);
    const outcomes = readAgentRecord(opened.run.record).filter((entry) => entry.kind === 'read_outcome');
    assert.equal(outcomes.length, WITHHELD.length + 1);
    for (const outcome of outcomes.slice(0, WITHHELD.length)) {
      assert.equal(outcome.ok, false, JSON.stringify(outcome));
      assert.match(String(outcome.message), /(Ultraplan refused to read|has 2 names).*this review withholds files that look like secrets/);
    }
    assert.match(String(outcomes[2]!.message), /notes-link\.txt \(it leads to .*\.env\)/);
    assert.deepEqual([outcomes.at(-1)!.ok, outcomes.at(-1)!.content], [true, '# Demo project\n']);
    assert.ok(!JSON.stringify(readAgentRecord(opened.run.record)).includes(SECRET), 'the secret reached the agent');
  });

  it('the same agent planning (not reviewing) reads .env: the refusal comes from the review session alone', async () => {
    const opened = await open();
    const session = await opened.backend.createSession({
      title: 'planning',
      events: [
        { type: 'event', data: setPlanModeEvent('plan-1') },
        { type: 'event', data: userMessageEvent('plan something') },
      ],
    });
    const outcomes = await waitForRecord(opened.run.record, 'read_outcome', WITHHELD.length + 1, 20_000);
    assert.equal(outcomes[0]!.ok, true, JSON.stringify(outcomes[0]));
    assert.equal(outcomes[0]!.content, `${SECRET}\n`);
    await opened.backend.archive(session.id);
  });
});
