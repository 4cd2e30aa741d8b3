// A followed session whose agent stopped with a restart of its session host (real host, real file
// store, the scripted agent): the controller shows it truthfully (phase, status, panel, the need
// announced once) and offers only what works: a waiting plan's decisions, or Continue.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bindingFor } from '../../../src/core/decision';
import { APPROVED_PLAN_MARKER } from '../../../src/core/protocol';
import { FollowedSession } from '../../../src/extension/sessions/followedSession';
import { CONTINUE_MESSAGE } from '../../../src/core/sessionActs';
import type { NotifierAction, SessionNotifier } from '../../../src/extension/sessions/sessionNotifier';
import { InProcessBackend } from '../../../src/service/inProcessBackend';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { parseScenario } from '../../../src/agents/catalogue/scenario';
import { scriptedAgentFactory } from '../../../src/agents/scripted/scriptedAgent';
import { FileSessionStore } from '../../../src/service/store/sessionStore';
import { allEvents, createRequest, scenarioFactory, toolResults, waitForStatus } from '../../service/hostTestKit';
import { quietLog } from '../../support/followedSession';
import { waitFor } from '../../support/wait';

class RecordingNotifier implements SessionNotifier {
  readonly said: Array<{ level: string; text: string; actions: string[] }> = [];
  say(level: 'info' | 'warning' | 'error', text: string, ...actions: NotifierAction[]): void {
    this.said.push({ level, text, actions: actions.map((a) => a.label) });
  }
  showReview(): void {}
  openExternal(): void {}
  isReviewShowing = () => false;
  askPermission = async () => {};
}

describe('FollowedSession: the agent stopped (agent_lost in the log)', () => {
  let dataDir: string;
  let host: SessionHost | undefined;
  let controller: FollowedSession | undefined;
  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-stopped-'));
  });
  afterEach(async () => {
    controller?.dispose();
    await controller?.settled();
    controller = undefined;
    await host?.close();
    host = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** A session in the state `scenario` leaves it, then the host restarts and its agent cannot resume. */
  async function stoppedSession(scenario: string, status: 'requires_action' | 'idle') {
    host = await SessionHost.open({ agentFactory: await scenarioFactory(scenario), store: new FileSessionStore(dataDir) });
    const { id } = await host.createSession(createRequest('Add a changelog'));
    await waitForStatus(host, id, status);
    await host.close();
    // Another scenario: the checkpoint does not match, so the agent is lost.
    host = await SessionHost.open({
      agentFactory: scriptedAgentFactory(parseScenario({ steps: [{ say: 'A fresh agent turn.' }] })),
      store: new FileSessionStore(dataDir),
    });
    const backend = new InProcessBackend({ host, label: 'Embedded', closeHostOnDispose: false });
    const notifier = new RecordingNotifier();
    controller = new FollowedSession({
      backend,
      log: quietLog,
      notifier,
      pollIntervalMs: 50,
      timeoutMs: 60_000,
      onSnapshot: () => undefined,
      from: { fresh: { key: `embedded:${id}`, sessionId: id, title: 'changelog', demo: false } },
    });
    controller.start();
    await waitFor(() => controller!.phase === 'agent_stopped', { message: 'the agent_stopped phase', timeoutMs: 30_000 });
    return { id, controller, notifier, host };
  }

  it('a waiting plan: shown as agent stopped with its plan decidable; approve goes out and the log carries it out', async () => {
    const { id, controller, notifier, host } = await stoppedSession('approve.json', 'requires_action');
    assert.equal(controller.state.attention, 'agent_stopped');
    assert.equal(controller.snapshot.inbox.attention, 'agent_stopped');
    const panel = controller.snapshot.panel;
    assert.equal(panel.phase, 'agent_stopped');
    assert.equal(panel.canDecide, true, 'Approve and Reject work: each starts a new agent turn');
    assert.equal(panel.agentStopped?.canContinue, false, 'no Continue while a plan waits');
    assert.match(panel.agentStopped?.text ?? '', /Approve starts a new agent turn that carries it out/);
    assert.deepEqual(
      notifier.said.map((s) => [s.level, s.text]),
      [['warning', 'the agent of "changelog" stopped: its plan can still be approved or rejected; either starts a new agent turn.']],
    );
    assert.deepEqual(await controller.decisions.continuePlanning(''), {
      sent: false,
      message: 'A plan waits for a decision: approve or reject it to start the new agent turn.',
    });
    const pending = controller.pendingPlan!;
    assert.deepEqual(await controller.decisions.approve(bindingFor(id, pending.toolUseId, pending.plan)), { sent: true });
    assert.match(toolResults(allEvents(host, id), pending.toolUseId)[0]?.text ?? '', new RegExp(APPROVED_PLAN_MARKER.trim()));
    await waitFor(() => controller.phase === 'executing' || controller.phase === 'completed', {
      message: 'the approved plan carried out',
      timeoutMs: 30_000,
    });
  });

  it('no plan: Continue (empty) sends a plain continue, and planning goes on with a fresh agent', async () => {
    const { id, controller, host } = await stoppedSession('question.json', 'idle');
    const panel = controller.snapshot.panel;
    assert.equal(panel.agentStopped?.canContinue, true);
    assert.equal(panel.canDecide, false);
    assert.deepEqual(await controller.decisions.continuePlanning('  '), { sent: true });
    const messages = allEvents(host, id).filter(
      (e) => e.type === 'user' && (e.message as { content?: unknown }).content === CONTINUE_MESSAGE,
    );
    assert.equal(messages.length, 1);
    await waitFor(() => controller.phase !== 'agent_stopped', { message: 'a fresh agent turn', timeoutMs: 30_000 });
    assert.deepEqual(await controller.decisions.continuePlanning('again'), {
      sent: false,
      message: 'The agent is running again; there is nothing to continue.',
    });
  });
});
