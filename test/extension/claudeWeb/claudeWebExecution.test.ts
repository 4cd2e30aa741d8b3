// A Claude Code on the web session carries out an approved 4-step plan, followed as the editor
// follows it: the real FollowedSession on the real claude-web backend, behind the strict
// Claude-compatibility server in front of the real session server, whose agent writes the log as
// Claude Code in the cloud does (TodoWrite and Write/Edit tool calls by absolute path, a result per
// turn) and pushes its commits to the session's outcome branch on the remote (a bare repository the
// person's clone reaches for github.com). The execution skips step 3 and edits a file no step names:
// the checklist shows it from the session's own tool calls; verification over the branch's diff
// since it left main (the product's readBranchChanges) finds step 3 missing and src/app.ts out of
// plan; Continue goes to the same session as a user message, the remote carries out step 3 and
// pushes it, the follower follows that turn to its result, and the branch then verifies clean.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readBranchChanges, sessionOutcome } from '../../../src/client/claudeWeb/branchChanges';
import type { ClaudeWebBackend } from '../../../src/client/claudeWeb/backend';
import { bindingFor } from '../../../src/core/decision';
import { parseGitDiff } from '../../../src/core/review/changes';
import { ANTHROPIC_VERSION } from '../../../src/core/protocol';
import { continueAfterExecution } from '../../../src/extension/sessions/continueAfterExecution';
import type { FollowedSession } from '../../../src/extension/sessions/followedSession';
import { loadPlanSteps } from '../../../src/extension/sessions/planSteps';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { SessionsServer } from '../../../src/service/http/server';
import { JournalServerStore } from '../../../src/service/store/journalStore';
import {
  assertAllStepsDone,
  assertStep3MissingAndAppOutOfPlan,
  OUT_OF_PLAN,
  PLAN_4,
  STEP_FILES,
  stepRows,
  todoList,
  verifyChange,
} from '../../agents/executionKit';
import { startClaudeCompatProxy, type ClaudeCompatProxy } from '../../support/claudeCompatProxy';
import { git, launchClaudeWebSession, makeClaudeHome, type ClaudeHome } from '../../support/claudeCompatFixtures';
import { CloudSessionAgent, type CloudScript } from '../../support/claudeWebCloudAgent';
import { followSession } from '../../support/followedSession';
import { waitFor } from '../../support/wait';

/** These sessions were followed live: a Continue never needs them attached again. */
const notRestored = {
  isDetached: () => false,
  sendReattached: async (): Promise<never> => assert.fail('a live session was attached again'),
};

const ORG = 'org-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
const UPSTREAM_TOKEN = 'upstream-token';
const APP_BEFORE = 'export const original = true;\n';

/** Skips step 3 (its todo left pending) and edits src/app.ts with no todo in progress; then Continue does step 3. */
const SCRIPT: CloudScript = {
  plan: PLAN_4,
  execution: [
    { say: 'Carrying out the approved plan.' },
    { todos: todoList(['in_progress', 'pending', 'pending', 'pending']) },
    { write: STEP_FILES[1].path, text: STEP_FILES[1].text },
    { todos: todoList(['completed', 'in_progress', 'pending', 'pending']) },
    { write: STEP_FILES[2].path, text: STEP_FILES[2].text },
    { todos: todoList(['completed', 'completed', 'pending', 'in_progress']) },
    { edit: STEP_FILES[4].path, oldString: '# widgets\n', text: STEP_FILES[4].text },
    { todos: todoList(['completed', 'completed', 'pending', 'completed']) },
    { edit: OUT_OF_PLAN.path, oldString: APP_BEFORE, text: OUT_OF_PLAN.text },
    { push: 'Add greet, export it and document it' },
    { say: 'Done: greet is in src/greet.ts, exported and documented. Pushed the branch.' },
  ],
  continued: [
    [
      { todos: todoList(['completed', 'completed', 'in_progress', 'completed']) },
      { write: STEP_FILES[3].path, text: STEP_FILES[3].text },
      { todos: todoList(['completed', 'completed', 'completed', 'completed']) },
      { push: 'Add a test for greet' },
      { say: 'Step 3 is done: test/greet.test.ts tests greet. Pushed the branch.' },
    ],
  ],
};

describe('Claude Code on the web executes an approved plan: checklist, verification over its branch, Continue (strict stand-in)', function () {
  this.timeout(60_000);
  let dir: string;
  let clone: string;
  let host: SessionHost;
  let server: SessionsServer;
  let proxy: ClaudeCompatProxy;
  let home: ClaudeHome;
  let backend: ClaudeWebBackend | undefined;
  let session: FollowedSession | undefined;
  const agents: CloudSessionAgent[] = [];
  let branch: string | undefined;

  before(async () => {
    await loadPlanSteps();
    dir = await mkdtemp(join(tmpdir(), 'ultraplan-cweb-exec-'));
    const origin = join(dir, 'origin.git');
    const seed = join(dir, 'seed');
    clone = join(dir, 'clone');
    await git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', origin);
    await git(dir, 'init', '--quiet', '--initial-branch=main', seed);
    await writeFile(join(seed, 'README.md'), '# widgets\n');
    await mkdir(join(seed, 'src'));
    await writeFile(join(seed, 'src/app.ts'), APP_BEFORE);
    await git(seed, 'add', '-A');
    await git(seed, 'commit', '--quiet', '-m', 'start');
    await git(seed, 'push', '--quiet', origin, 'main');
    // The person's clone names GitHub; git reads the bare repository for it.
    await git(dir, 'clone', '--quiet', origin, clone);
    await git(clone, 'remote', 'set-url', 'origin', 'https://github.com/acme/widgets.git');
    await git(clone, 'config', `url.${origin}.insteadOf`, 'https://github.com/acme/widgets.git');

    host = new SessionHost({
      agentFactory: () => {
        const checkout = join(dir, `cloud-${agents.length + 1}`);
        // The cloud container's own checkout of the repository, made when the session starts.
        execFileSync('git', ['clone', '--quiet', origin, checkout], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
        const agent = new CloudSessionAgent(SCRIPT, checkout, () => {
          assert.ok(branch, 'the outcome branch is known before the remote pushes');
          return branch;
        });
        agents.push(agent);
        return agent;
      },
    });
    server = new SessionsServer({ store: new JournalServerStore(host, 'memory'), token: UPSTREAM_TOKEN });
    const { port } = await server.listen(0, '127.0.0.1');
    proxy = await startClaudeCompatProxy({
      upstreamUrl: `http://127.0.0.1:${port}`,
      upstreamToken: UPSTREAM_TOKEN,
      validTokens: ['token-valid'],
      organizationUuid: ORG,
      repos: { 'acme/widgets': { app: 'installed' } },
    });
    home = await makeClaudeHome({ accessToken: 'token-valid' }, ORG);
  });

  after(async () => {
    session?.dispose();
    await session?.settled();
    await backend?.dispose();
    await proxy?.close();
    await server?.close();
    await host?.close();
    await home?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The branch's change since it left main, read as Verify Against Plan reads it, and verified with the scripted finders. */
  async function verifyBranch(reported: { done: number; total: number }) {
    const resource = await backend!.getSession(session!.sessionId);
    const changes = await readBranchChanges(resource.session_context, clone);
    const parsed = parseGitDiff(changes.diff);
    return verifyChange({ files: parsed.files, scopeText: `the changes on ${changes.branch}` }, PLAN_4, reported);
  }

  it('the stand-in refuses a message to the session that Claude Code would not send', async () => {
    const id = session?.sessionId ?? 'cse_none';
    const send = async (payload: Record<string, unknown>) => {
      const response = await fetch(`${proxy.url}/v1/code/sessions/${id}/events`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer token-valid',
          'anthropic-version': ANTHROPIC_VERSION,
          'anthropic-client-platform': 'cli',
          'user-agent': 'claude-cli/2.1.332 (external, cli)',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ events: [{ payload: { uuid: randomUUID(), ...payload } }] }),
      });
      return { status: response.status, text: await response.text() };
    };
    const message = { role: 'user', content: 'Carry out step 3.' };
    const refused = [
      [{ type: 'user', message }, /parent_tool_use_id/],
      [{ type: 'user', parent_tool_use_id: 'toolu_1', message }, /parent_tool_use_id/],
      [{ type: 'user', parent_tool_use_id: null, message: { role: 'assistant', content: 'x' } }, /message\.role/],
      [{ type: 'user', parent_tool_use_id: null, message: { role: 'user', content: '' } }, /message\.content/],
      [{ type: 'user', parent_tool_use_id: null, message: { role: 'user', content: ['text'] } }, /message\.content/],
    ] as const;
    for (const [payload, reason] of refused) {
      const answer = await send(payload);
      assert.equal(answer.status, 400, JSON.stringify(payload));
      assert.match(answer.text, reason);
    }
  });

  it('the checklist from its tool calls, step 3 missing and src/app.ts out of plan on its branch, Continue in the same session, verified clean', async () => {
    const launched = await launchClaudeWebSession(home, proxy.url, clone, 'ultraplan: greetings', 'Add a greeting function');
    backend = launched.backend;
    const created = { id: launched.sessionId };
    assert.match(created.id, /^cse_/);
    branch = sessionOutcome((await backend.getSession(created.id)).session_context).branch;
    assert.match(branch, /^claude\/greetings-[0-9a-f]{5}$/);

    const c = (session = followSession(backend, created.id, 30_000));
    await waitFor(() => c.canDecide, { message: 'the plan to decide', timeoutMs: 30_000 });
    const pending = c.pendingPlan!;
    assert.equal(pending.plan, PLAN_4);
    assert.deepEqual(await c.decisions.approve(bindingFor(created.id, pending.toolUseId, pending.plan)), { sent: true });
    await waitFor(() => c.phase === 'completed', { message: 'the execution to end', timeoutMs: 30_000 });

    // The checklist, read from Claude Code's own TodoWrite and Write/Edit calls.
    const execution = () => c.snapshot.panel.execution;
    assert.deepEqual(stepRows(c.state.execution!.checklist), [
      ['1', 'done', [STEP_FILES[1].path]],
      ['2', 'done', [STEP_FILES[2].path]],
      ['3', 'pending', []],
      ['4', 'done', [STEP_FILES[4].path]],
    ]);
    assert.deepEqual(c.state.execution!.checklist.unattributedFiles, [OUT_OF_PLAN.path]);
    assert.deepEqual(c.state.execution!.checklist.notInPlan, []);
    assert.equal(execution()?.summary, 'Completed: 3 of 4 steps reported done');
    assert.equal(c.snapshot.inbox.progress, 'Completed: 3 of 4 steps reported done');

    // Verification over the pushed branch: step 3 missing, src/app.ts out of plan.
    const continueText = assertStep3MissingAndAppOutOfPlan(await verifyBranch({ done: 3, total: 4 }));
    assert.match(continueText, /step 3/i);

    // Continue: a user message to the same session, through the strict stand-in.
    const before = proxy.requests.length;
    assert.deepEqual(await continueAfterExecution(c, continueText, notRestored), { sent: true, followed: true });
    assert.equal(c.phase, 'executing', 'executing again at once');
    const posts = proxy.requests.slice(before).filter((r) => r.method === 'POST' && r.path.endsWith('/events'));
    assert.deepEqual(
      posts.map((r) => [r.path, r.status]),
      [[`/v1/code/sessions/${created.id}/events`, 200]],
    );
    const [sent] = (posts[0]!.body as { events: Array<{ payload: Record<string, unknown> }> }).events;
    assert.deepEqual(
      { ...sent!.payload, uuid: 'u' },
      { uuid: 'u', type: 'user', parent_tool_use_id: null, message: { role: 'user', content: continueText } },
    );
    assert.equal(agents.length, 1, 'no new session');
    assert.deepEqual(agents[0]!.messages, [continueText]);

    await waitFor(() => c.phase === 'completed', { message: 'the continued turn to end', timeoutMs: 30_000 });
    assert.match(c.state.outcome?.text ?? '', /Step 3 is done: test\/greet\.test\.ts tests greet/);
    assert.deepEqual(stepRows(c.state.execution!.checklist), [
      ['1', 'done', [STEP_FILES[1].path]],
      ['2', 'done', [STEP_FILES[2].path]],
      ['3', 'done', [STEP_FILES[3].path]],
      ['4', 'done', [STEP_FILES[4].path]],
    ]);
    assert.equal(execution()?.summary, 'Completed: 4 of 4 steps reported done');

    const again = await verifyBranch({ done: 4, total: 4 });
    assert.deepEqual(again.files, ['README.md', 'src/app.ts', 'src/greet.ts', 'src/index.ts', 'test/greet.test.ts']);
    assertAllStepsDone(again);
  });
});
