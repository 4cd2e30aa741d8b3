// A Jules session followed as the editor follows any session (the real FollowedSession, its
// decisions and its snapshots) against the Jules stand-in on 127.0.0.1: the plan shows as a
// revision, Reject with a line comment goes to Jules as a message and the revised plan arrives,
// Approve goes through :approvePlan, and the session ends completed. A session started elsewhere
// (the Jules web app, another tool) and waiting on its plan is listed by a window's key-only
// backend, its link names it, and followed as Attach follows any session it approves once.
import assert from 'node:assert/strict';
import { parseAttachTarget } from '../../../src/core/attachTarget';
import { bindingFor } from '../../../src/core/decision';
import { EDITED_PLAN_REFUSAL, JulesBackend } from '../../../src/client/jules/backend';
import { julesVoice } from '../../../src/extension/jules/julesVoice';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { attachedSession } from '../../../src/extension/sessions/attachedSession';
import { FollowedSession } from '../../../src/extension/sessions/followedSession';
import { quietLog, silentNotifier } from '../../support/followedSession';
import { JulesStandIn } from '../../support/jules/standIn';
import { waitFor } from '../../support/wait';

const KEY = 'AIzaSy-stand-in-key-0123456789';

/** A FollowedSession of a Jules session, started, with Jules's voice and a short poll. */
function followJules(
  backend: ConstructorParameters<typeof FollowedSession>[0]['backend'],
  from: ConstructorParameters<typeof FollowedSession>[0]['from'],
): FollowedSession {
  const followed = new FollowedSession({
    backend,
    log: quietLog,
    notifier: silentNotifier,
    voice: julesVoice,
    pollIntervalMs: 20,
    timeoutMs: 60_000,
    onSnapshot: () => undefined,
    from,
  });
  followed.start();
  return followed;
}

describe('Jules followed as any session', () => {
  let standIn: JulesStandIn;
  let session: FollowedSession | undefined;
  afterEach(async () => {
    session?.dispose();
    await session?.settled();
    await standIn?.close();
  });

  /** A backend that starts sessions (on octo/hello), polling fast. */
  const launching = () =>
    new JulesBackend({
      baseUrl: standIn.baseUrl,
      getKey: async () => KEY,
      repository: { owner: 'octo', name: 'hello', branch: 'main' },
      minPollMs: 10,
      maxPollMs: 40,
    });
  const startGreeting = async (backend: JulesBackend, title: string): Promise<string> =>
    (
      await backend.createSession({
        title,
        events: [
          { type: 'event', data: setPlanModeEvent('m1') },
          { type: 'event', data: userMessageEvent('Add a greeting file') },
        ],
      })
    ).id;

  it('plan, reject as a message, revised plan, approve, completed', async () => {
    standIn = await new JulesStandIn({ key: KEY }).start();
    const backend = launching();
    const id = await startGreeting(backend, 'ultraplan: greeting');
    const s = (session = followJules(backend, { fresh: { key: `jules:${id}`, sessionId: id, title: 'greeting', demo: false } }));

    await waitFor(() => s.canDecide, 'the first plan, decidable');
    const first = s.pendingPlan!;
    assert.match(first.plan, /2\. Create hello\.txt/);
    assert.equal(s.phase, 'plan_ready');

    // An edited plan: refused in Jules's words before anything is sent, and the plan still waits.
    const sent = standIn.requests.length;
    const edited = await s.decisions.approveEdited(bindingFor(id, first.toolUseId, first.plan), `${first.plan}3. Also a README\n`);
    assert.deepEqual(edited, { sent: false, message: EDITED_PLAN_REFUSAL });
    assert.equal(
      standIn.requests.filter((r) => r.method === 'POST').length,
      standIn.requests.slice(0, sent).filter((r) => r.method === 'POST').length,
    );
    await waitFor(() => s.canDecide, 'the plan decidable again');

    const rejected = await s.decisions.reject(bindingFor(id, first.toolUseId, first.plan), 'Use markdown.', [
      { line: 4, quote: '2. Create hello.txt', text: 'Call it greeting.md' },
    ]);
    assert.deepEqual(rejected, { sent: true });
    const message = JSON.parse(standIn.requests.find((r) => r.path.endsWith(':sendMessage'))!.body) as { prompt: string };
    assert.match(message.prompt, /Use markdown\./);
    assert.match(message.prompt, /Call it greeting\.md/);

    await waitFor(() => s.canDecide && s.pendingPlan?.toolUseId !== first.toolUseId, 'the revised plan');
    const second = s.pendingPlan!;
    assert.match(second.plan, /3\. Address the review: /);
    assert.equal(s.snapshot.revisions.length, 2);

    assert.deepEqual(await s.decisions.approve(bindingFor(id, second.toolUseId, second.plan)), { sent: true });
    assert.equal(standIn.requests.filter((r) => r.path.endsWith(':approvePlan')).length, 1);
    await waitFor(() => s.phase === 'completed', 'the session completed');
    assert.ok(standIn.requests.every((r) => r.keyOk));
  });

  it('attach: a session started elsewhere is listed as waiting, its link names it, its plan shows, and Approve goes to :approvePlan once', async () => {
    standIn = await new JulesStandIn({ key: KEY }).start();
    const elsewhere = launching();
    const id = await startGreeting(elsewhere, 'greeting from the web app');
    await elsewhere.readEvents(id, null); // Jules plans; the session waits for approval
    assert.equal(standIn.sessions.get(id)?.state, 'AWAITING_PLAN_APPROVAL');

    const here = new JulesBackend({ baseUrl: standIn.baseUrl, getKey: async () => KEY, minPollMs: 10, maxPollMs: 40 });
    const listed = (await here.listSessions()).find((s) => s.id === id);
    assert.ok(listed, 'the session started elsewhere is listed');
    assert.equal(listed.session_status, 'requires_action');
    assert.equal(listed.title, 'greeting from the web app');
    const link = (await here.getSession(id)) && here.sessionLink(id);
    assert.equal(link, `https://jules.google.com/session/${id}`);
    assert.deepEqual(parseAttachTarget(link!), { ok: true, target: { backend: 'jules', sessionId: id } });
    assert.deepEqual(parseAttachTarget(id), { ok: true, target: { backend: 'jules', sessionId: id } });

    const fresh = attachedSession(listed, `jules:${id}`);
    const s = (session = followJules(here, { fresh }));
    await waitFor(() => s.canDecide, 'the plan of the attached session, decidable');
    const plan = s.pendingPlan!;
    assert.match(plan.plan, /Read the code the task touches: Add a greeting file/);
    assert.match(plan.plan, /2\. Create hello\.txt/);
    assert.equal(s.phase, 'plan_ready');
    assert.equal(s.snapshot.revisions.length, 1);

    assert.deepEqual(await s.decisions.approve(bindingFor(id, plan.toolUseId, plan.plan)), { sent: true });
    assert.equal(standIn.requests.filter((r) => r.path.endsWith(':approvePlan')).length, 1);
    await waitFor(() => s.phase === 'completed', 'the attached session completed');
    assert.equal(standIn.requests.filter((r) => r.path.endsWith(':approvePlan')).length, 1, 'approved once');
    assert.ok(standIn.requests.every((r) => r.keyOk));
  });
});
