// In-host: the FollowedSession's answers to tool permission requests, against a real embedded
// SessionHost running the fake ACP agent program (execute-with-permission scenario): after the
// approval the edit request is open; one answer goes out, a second one to the same request is
// refused with a message; a request the session already took an answer for (409) is said to be
// answered elsewhere; a finished session refuses answers. Nothing is ever answered by itself.
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { bindingFor } from '../../../src/core/decision';
import { permissionResponseEvent } from '../../../src/core/permissionRequests';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { FollowedSession } from '../../../src/extension/sessions/followedSession';
import { vscodeNotifier } from '../../../src/extension/sessions/vscodeNotifier';
import { createAcpAgentFactory } from '../../../src/agents/acp/acpAgentFactory';
import { InProcessBackend } from '../../../src/service/inProcessBackend';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { fakeAgentCommand, readAgentRecord } from '../../support/fakeAcpAgent';
import { waitFor } from '../../support/wait';
import { ORIGINAL_APP } from '../../support/acpFixtures';

const EXTENSION_ID = 'ultraplan.ultraplan';

interface RecordEntry {
  kind: string;
  toolCallId?: string;
  outcome?: string;
}

const readRecord = (file: string): RecordEntry[] => readAgentRecord<RecordEntry>(file);

describe('answering tool permission requests (FollowedSession, real embedded host, fake ACP agent)', function () {
  this.timeout(60_000);
  let dir = '';
  let record = '';
  let backend: InProcessBackend | undefined;
  let log: vscode.LogOutputChannel | undefined;
  const controllers: FollowedSession[] = [];

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-permission-host-'));
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src', 'app.ts'), ORIGINAL_APP);
    record = path.join(dir, 'record.jsonl');
    const argv = fakeAgentCommand('execute-with-permission.json', record);
    const host = new SessionHost({
      agentFactory: await createAcpAgentFactory({ argv, cwd: dir, label: 'Fake (ACP)', afterApproval: 'default', stopGraceMs: 500 }),
    });
    backend = new InProcessBackend({ host, label: 'Embedded · Fake (ACP)' });
    log = vscode.window.createOutputChannel('Ultraplan permission answers (test)', { log: true });
  });

  after(async () => {
    for (const c of controllers) c.dispose();
    await Promise.allSettled(controllers.map((c) => c.settled()));
    await backend?.dispose();
    log?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A followed session whose approved plan now waits on the edit's permission. */
  async function sessionAskingPermission(n: number): Promise<FollowedSession> {
    const resource = await backend!.createSession({
      title: `ultraplan: permission ${n}`,
      events: [
        { type: 'event', data: setPlanModeEvent(`set-mode-${n}`) },
        { type: 'event', data: userMessageEvent('set original to false') },
      ],
    });
    const controller = new FollowedSession({
      backend: backend!,
      log: log!,
      notifier: vscodeNotifier(),
      pollIntervalMs: 100,
      timeoutMs: 60_000,
      onSnapshot: () => undefined,
      from: {
        fresh: { key: `test:${resource.id}`, sessionId: resource.id, title: `permission ${n}`, demo: false, agentLabel: 'Fake (ACP)' },
      },
    });
    controllers.push(controller);
    controller.start();
    const plan = await waitFor(() => (controller.pendingPlan?.requestId ? controller.pendingPlan : undefined), {
      timeoutMs: 20_000,
      intervalMs: 50,
      message: 'the plan',
    });
    assert.deepEqual(await controller.decisions.approve(bindingFor(resource.id, plan.toolUseId, plan.plan)), { sent: true });
    await waitFor(() => controller.permissions.open.length === 1, {
      timeoutMs: 20_000,
      intervalMs: 50,
      message: 'the edit permission request',
    });
    assert.equal(controller.state.attention, 'needs_permission');
    assert.equal(controller.permissions.open[0]?.toolUseId, 'edit-1');
    return controller;
  }

  const editOutcomes = () =>
    readRecord(record)
      .filter((e) => e.kind === 'permission_outcome' && e.toolCallId === 'edit-1')
      .map((e) => e.outcome);

  it('one answer goes out; the same answer again is refused with a message; a finished session refuses answers', async () => {
    const controller = await sessionAskingPermission(1);
    const request = controller.permissions.open[0]!;
    const binding = controller.permissions.binding(request);
    assert.deepEqual(await controller.permissions.answerPermission(binding, request.requestId, 'allow'), { sent: true });
    assert.equal(controller.permissions.open.length, 0);
    const again = await controller.permissions.answerPermission(binding, request.requestId, 'deny');
    assert.deepEqual(again, { sent: false, message: 'This permission request was already answered; it is not answered twice.' });
    await waitFor(() => controller.phase === 'completed', { timeoutMs: 20_000, intervalMs: 50, message: 'the session to complete' });
    assert.deepEqual(editOutcomes(), ['allow'], 'the agent got exactly one answer');
    const late = await controller.permissions.answerPermission(binding, request.requestId, 'allow');
    assert.equal(late.sent, false);
    assert.match(late.sent ? '' : late.message, /no longer followed/);
  });

  it('an answer bound to other input, or to another session, is refused and nothing is sent', async () => {
    const controller = await sessionAskingPermission(2);
    const request = controller.permissions.open[0]!;
    const binding = controller.permissions.binding(request);
    const changed = await controller.permissions.answerPermission({ ...binding, planHash: 'f'.repeat(64) }, request.requestId, 'allow');
    assert.match(changed.sent ? '' : changed.message, /changed since it was shown/);
    const other = await controller.permissions.answerPermission({ ...binding, sessionId: 'session_other' }, request.requestId, 'allow');
    assert.match(other.sent ? '' : other.message, /another Ultraplan session/);
    assert.equal(controller.permissions.open.length, 1, 'still open: refusals answer nothing');
    // Then the real answer: refusals did not use it up.
    assert.deepEqual(await controller.permissions.answerPermission(binding, request.requestId, 'deny'), { sent: true });
    await waitFor(() => controller.phase === 'completed', { timeoutMs: 20_000, intervalMs: 50, message: 'the session to complete' });
    assert.deepEqual(editOutcomes(), ['allow', 'reject']);
  });

  it('answered elsewhere first (the session refuses a second answer, 409): said so, the request closes', async () => {
    const controller = await sessionAskingPermission(3);
    const request = controller.permissions.open[0]!;
    // Another reviewer (the browser, another window) answers first.
    await backend!.sendEvents(controller.sessionId, [permissionResponseEvent(request, 'allow')]);
    const ours = await controller.permissions.answerPermission(controller.permissions.binding(request), request.requestId, 'deny');
    assert.equal(ours.sent, false);
    // Said either way it is learnt: the 409 of the session, or the other answer read first (its
    // control_response closes the request before ours is tried).
    assert.match(ours.sent ? '' : ours.message, /answered elsewhere/);
    assert.equal(controller.permissions.open.length, 0);
    await waitFor(() => controller.phase === 'completed', { timeoutMs: 20_000, intervalMs: 50, message: 'the session to complete' });
    assert.deepEqual(editOutcomes(), ['allow', 'reject', 'allow'], 'only the first answer reached the agent');
  });
});
