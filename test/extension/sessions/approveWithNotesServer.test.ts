// Approve with notes on our own server: a followed session (the real FollowedSession) on the
// real HTTP backend, against a real ultraplan-server child process running an ACP agent (the fake
// agent program, through the real spawn path). The server's log and the agent's own record show
// the approval, then the notes as the agent's next prompt.
import { strict as assert } from 'node:assert';
import { notesPrompt } from '../../../src/core/approvalNotes';
import { bindingFor } from '../../../src/core/decision';
import { SessionsClient } from '../../../src/client/sessionsClient';
import { HttpBackend } from '../../../src/client/httpBackend';
import type { FollowedSession } from '../../../src/extension/sessions/followedSession';
import { followSession } from '../../support/followedSession';
import { serversPerTest } from '../../support/serverProcess';
import { fakeRun, waitForRecord, type FakeRun } from '../../support/fakeAcpAgent';
import { createRequest } from '../../service/hostTestKit';
import { sessionEvents } from '../../e2e/ultraplanSteps';
import { waitFor } from '../../support/wait';

const NOTES = 'Keep greet() pure.';

describe('approve with notes on ultraplan-server (real server, ACP agent)', function () {
  this.timeout(40_000);
  let run: FakeRun | undefined;
  let controller: FollowedSession | undefined;

  // In this order: the session let go, the server stopped, then the agent's workspace removed.
  afterEach(async () => {
    controller?.dispose();
    await controller?.settled();
  });
  const servers = serversPerTest();
  afterEach(async () => {
    await run?.cleanup();
  });

  it('one POST: the approval, then the wrapped notes; the agent gets the notes as its next prompt', async () => {
    run = await fakeRun('claude-plan.json');
    const server = await servers.start({
      agent: `acp:${run.argv.map((arg) => JSON.stringify(arg)).join(' ')}`,
      // The agent runs in its sandbox: its record folder is the one it may write outside it.
      extraArgs: ['--workspace', run.workspace, '--sandbox', 'required', '--sandbox-share', run.recordDir],
    });
    const token = server.token;
    const backend = new HttpBackend({
      client: new SessionsClient({ baseUrl: server.url, getToken: async () => token ?? '' }),
      preferStream: true,
    });
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    controller = followSession(backend, session.id, 30_000);
    const c = controller;
    await waitFor(() => c.canDecide, { message: 'a plan to decide', timeoutMs: 30_000 });
    const pending = c.pendingPlan!;
    assert.deepEqual(await c.decisions.approveWithNotes(bindingFor(session.id, pending.toolUseId, pending.plan), NOTES), { sent: true });

    // The agent's own record: the task, then the notes as a prompt of their own.
    // Approved in a read-only sandbox, the agent starts again where the workspace is writable and is
    // told the approved plan (this fake agent cannot load its session), the notes with it.
    const prompts = await waitForRecord(run.record, 'prompt', 2, 15_000);
    assert.match(String(prompts[1]?.text), /^The reviewer approved the plan below\. Carry it out now/);
    assert.ok(String(prompts[1]?.text).endsWith(`\n\n${notesPrompt(NOTES)}`), String(prompts[1]?.text));
    // The server's log: the approval, then the notes message, as sent.
    const events = await sessionEvents(server, session.id);
    const decisionAt = events.findIndex((e) => e.type === 'control_response');
    const notesAt = events.findIndex(
      (e) => e.type === 'user' && (e.message as { content?: unknown } | undefined)?.content === notesPrompt(NOTES),
    );
    assert.ok(decisionAt >= 0 && notesAt === decisionAt + 1, `control_response at ${decisionAt}, notes at ${notesAt}`);
    assert.equal((events[decisionAt]?.response as { response?: { behavior?: string } } | undefined)?.response?.behavior, 'allow');
    assert.equal(c.snapshot.panel.revisions.at(-1)?.notes, NOTES);
  });
});
