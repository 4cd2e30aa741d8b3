// A session whose agent stopped with a host restart: what it left stays answerable, and each
// answer starts a fresh agent turn (the real agents do this in acpResume.test.ts; here a recording
// agent shows what the host asks of it). Real file store, real restarts in process.
import { strict as assert } from 'node:assert';
import { planHash } from '../../../src/core/decision';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionsError } from '../../../src/core/errors';
import { parseEventBatch } from '../../../src/core/eventBatch';
import {
  AGENT_LOST_SUBTYPE,
  AGENT_RESTARTED_SUBTYPE,
  AGENT_RESUMED_SUBTYPE,
  APPROVED_PLAN_MARKER,
  controlResponseEvent,
  userMessageEvent,
} from '../../../src/core/protocol';
import type { Agent, AgentContext, AgentStartOptions, ResumeOutcome } from '../../../src/agents/agent';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { FileSessionStore } from '../../../src/service/store/sessionStore';
import { allEvents, createRequest, toolResults, waitForStatus } from '../hostTestKit';

const PLAN = '# Plan\n\n1. Flip the flag.\n';

/** An agent that does what the test says and records what the host asked of it. */
class RecordingAgent implements Agent {
  readonly label = 'Recording agent';
  readonly starts: Array<{ prompt: string; options: AgentStartOptions | undefined }> = [];
  readonly messages: string[] = [];
  readonly carriedOut: string[] = [];
  ctx: AgentContext | undefined;
  constructor(private readonly behaviour: { ask?: 'plan' | 'permission'; resume?: boolean | ResumeOutcome; carryOut?: boolean } = {}) {
    if (behaviour.carryOut) this.carryOut = (prompt: string) => void this.carriedOut.push(prompt);
  }
  carryOut?: (prompt: string) => void;
  async start(ctx: AgentContext, prompt: string, options?: AgentStartOptions): Promise<void> {
    this.ctx = ctx;
    this.starts.push({ prompt, options });
    ctx.checkpoint?.({ recording: true });
    ctx.emit({ type: 'system', subtype: 'init' });
    if (this.behaviour.ask === 'plan') {
      ctx.emit({
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ExitPlanMode', input: { plan: PLAN } }] },
      });
      ctx.emit({
        type: 'control_request',
        request_id: 'acp-plan-1',
        request: { subtype: 'can_use_tool', tool_name: 'ExitPlanMode', tool_use_id: 'toolu_1', input: { plan: PLAN } },
      });
      ctx.setStatus('requires_action');
    } else if (this.behaviour.ask === 'permission') {
      ctx.emit({
        type: 'control_request',
        request_id: 'acp-edit-1',
        request: { subtype: 'can_use_tool', tool_name: 'Write', tool_use_id: 'toolu_2', input: { file_path: 'a.ts' } },
      });
      ctx.setStatus('requires_action');
    } else ctx.setStatus('running');
  }
  onUserMessage(text: string): void {
    this.messages.push(text);
  }
  onDecision(): void {}
  async stop(): Promise<void> {}
  resume?: (ctx: AgentContext, checkpoint: unknown) => Promise<boolean | ResumeOutcome>;
}

function withResume(agent: RecordingAgent, outcome: boolean | ResumeOutcome): RecordingAgent {
  agent.resume = async (ctx) => {
    agent.ctx = ctx;
    return outcome;
  };
  return agent;
}

async function rejects(promise: Promise<unknown>, kind: SessionsError['kind'], message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => err instanceof SessionsError && err.kind === kind && message.test(err.message));
}

function systemEvents(host: SessionHost, id: string, subtype: string) {
  return allEvents(host, id).filter((e) => e.type === 'system' && e.subtype === subtype);
}

describe('SessionHost: a session whose agent stopped with a restart', () => {
  let dataDir: string;
  let host: SessionHost | undefined;
  let agents: RecordingAgent[];
  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-lost-'));
    agents = [];
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const open = (make: () => RecordingAgent) =>
    SessionHost.open({
      agentFactory: () => {
        const agent = make();
        agents.push(agent);
        return agent;
      },
      store: new FileSessionStore(dataDir),
    });

  /** A session with a plan waiting, then a restart whose agents cannot resume. */
  async function planThenRestart(
    next: () => RecordingAgent = () => new RecordingAgent(),
    status: 'idle' | 'requires_action' = 'idle',
  ): Promise<string> {
    host = await open(() => new RecordingAgent({ ask: 'plan' }));
    const { id } = await host.createSession(createRequest('Flip the flag'));
    await waitForStatus(host, id, 'requires_action');
    await host.close();
    host = await open(next);
    await waitForStatus(host, id, status);
    return id;
  }

  it('says so once, with what can still be done; the reader sees the agent stopped', async () => {
    const id = await planThenRestart();
    const lost = systemEvents(host!, id, AGENT_LOST_SUBTYPE);
    assert.equal(lost.length, 1);
    assert.match(
      String(lost[0]?.message),
      /could not continue \(the agent does not support resuming\)\. Its plan can still be decided: Approve starts a new agent turn/,
    );
    assert.deepEqual(parseEventBatch(allEvents(host!, id)).agentLife, { stopped: true, message: lost[0]?.message });
    await host!.close();
    host = await open(() => new RecordingAgent());
    assert.equal(systemEvents(host, id, AGENT_LOST_SUBTYPE).length, 1, 'said once across restarts');
  });

  it('approve starts a fresh turn that carries the plan out, bound to that plan; the decision is taken once', async () => {
    const id = await planThenRestart();
    const decision = controlResponseEvent('acp-plan-1', { behavior: 'allow', updatedInput: { plan: PLAN } });
    await host!.appendEvents(id, [decision]);
    const fresh = agents.at(-1)!;
    assert.equal(fresh.starts.length, 1);
    assert.deepEqual(fresh.starts[0]?.options, { carryOut: true, approvedPlanHash: planHash(PLAN) });
    assert.match(
      fresh.starts[0]!.prompt,
      /The reviewer approved the plan below\. Carry it out now\.\n\nThe approved plan:\n\n# Plan\n\n1\. Flip the flag\./,
    );
    assert.match(fresh.starts[0]!.prompt, /Person: Flip the flag/);
    // The log says the plan was approved (as a live agent's answer would) and that an agent runs again.
    assert.deepEqual(toolResults(allEvents(host!, id), 'toolu_1'), [
      { text: `User approved the plan.\n\n${APPROVED_PLAN_MARKER}${PLAN}`, isError: false },
    ]);
    assert.equal(systemEvents(host!, id, AGENT_RESTARTED_SUBTYPE).length, 1);
    assert.deepEqual(parseEventBatch(allEvents(host!, id)).agentLife, { stopped: false });
    await rejects(host!.appendEvents(id, [decision]), 'conflict', /control_request acp-plan-1 was already answered/);
    await host!.close();
    host = await open(() => new RecordingAgent());
    await rejects(host.appendEvents(id, [decision]), 'conflict', /was already answered/);
  });

  it('an edited approval carries out the edited plan, marked as edited', async () => {
    const id = await planThenRestart();
    const edited = `${PLAN}2. Say why.\n`;
    await host!.appendEvents(id, [controlResponseEvent('acp-plan-1', { behavior: 'allow', updatedInput: { plan: edited } })]);
    assert.match(agents.at(-1)!.starts[0]!.prompt, /2\. Say why\./);
    assert.match(toolResults(allEvents(host!, id), 'toolu_1')[0]!.text, /Approved Plan \(edited by user\)/);
  });

  it('reject starts a fresh planning turn that revises the plan from the feedback', async () => {
    const id = await planThenRestart();
    await host!.appendEvents(id, [controlResponseEvent('acp-plan-1', { behavior: 'deny', message: 'Also say why.' })]);
    const start = agents.at(-1)!.starts[0]!;
    assert.equal(start.options, undefined, 'planning, not carrying out');
    assert.match(start.prompt, /rejected the plan below\. Their feedback:\n\nAlso say why\.\n\nThe rejected plan:\n\n# Plan/);
    assert.deepEqual(toolResults(allEvents(host!, id), 'toolu_1'), [{ text: 'Also say why.', isError: true }]);
  });

  it('a message instead of a decision closes the plan and goes on planning with the conversation', async () => {
    const id = await planThenRestart();
    await host!.appendEvents(id, [userMessageEvent('Continue planning; consider the tests too.')]);
    const start = agents.at(-1)!.starts[0]!;
    assert.equal(start.options?.carryOut, false);
    assert.match(start.prompt, /Go on planning/);
    assert.match(start.prompt, /Agent proposed this plan:\n# Plan/);
    assert.match(start.prompt, /Person: Continue planning; consider the tests too\.$/);
    assert.equal(toolResults(allEvents(host!, id), 'toolu_1')[0]?.isError, true);
    // The closed plan takes no decision any more.
    await rejects(
      host!.appendEvents(id, [controlResponseEvent('acp-plan-1', { behavior: 'allow', updatedInput: { plan: PLAN } })]),
      'conflict',
      /already answered/,
    );
  });

  it('a permission request the stopped agent left is refused with why; the turn it cut goes on in a new agent turn', async () => {
    host = await open(() => new RecordingAgent({ ask: 'permission' }));
    const { id } = await host.createSession(createRequest('Flip the flag'));
    await waitForStatus(host, id, 'requires_action');
    await host.close();
    host = await open(() => new RecordingAgent());
    await waitForStatus(host, id, 'running');
    assert.match(
      String(systemEvents(host, id, AGENT_LOST_SUBTYPE)[0]?.message),
      /A new agent turn goes on with the message it was answering/,
    );
    const fresh = agents.at(-1)!.starts[0]!;
    assert.match(fresh.prompt, /Go on planning[\s\S]*Person: Flip the flag$/, 'the cut message is the last entry of the fresh turn');
    assert.equal(systemEvents(host, id, AGENT_RESTARTED_SUBTYPE).length, 1);
    await rejects(
      host.appendEvents(id, [controlResponseEvent('acp-edit-1', { behavior: 'allow', updatedInput: {} })]),
      'conflict',
      /control_request acp-edit-1 can no longer be answered: the agent that asked it stopped when the session host restarted/,
    );
  });

  it('an approval stored just before a crash is not lost: the next start says the agent stopped, and a new turn carries the plan out', async () => {
    const id = await planThenRestart(() => new RecordingAgent());
    // The fresh agent dies before it writes anything (its start never checkpoints here).
    agents.length = 0;
    await host!.appendEvents(id, [controlResponseEvent('acp-plan-1', { behavior: 'allow', updatedInput: { plan: PLAN } })]);
    await host!.close();
    host = await open(() => new RecordingAgent());
    await waitForStatus(host, id, 'running');
    assert.equal(systemEvents(host, id, AGENT_LOST_SUBTYPE).length, 2, 'the fresh turn was lost too, and said so');
    // The approved turn never ended: a new one carries the plan out without being asked again.
    const start = agents.at(-1)!.starts[0]!;
    // Bound to the approved plan, so the turn's progress reaches its checklist.
    assert.deepEqual(start.options, { carryOut: true, approvedPlanHash: planHash(PLAN) });
    assert.match(start.prompt, /carry on carrying it out/);
  });

  it('an agent that reloads its conversation gets the decision as an answer, not a fresh turn', async () => {
    const id = await planThenRestart(() => withResume(new RecordingAgent({ carryOut: true }), 'reloaded'), 'requires_action');
    assert.equal(systemEvents(host!, id, AGENT_LOST_SUBTYPE).length, 0);
    assert.match(
      String(systemEvents(host!, id, AGENT_RESUMED_SUBTYPE)[0]?.message),
      /Recording agent continued this session's conversation\. Its plan can still be decided\./,
    );
    await host!.appendEvents(id, [controlResponseEvent('acp-plan-1', { behavior: 'allow', updatedInput: { plan: PLAN } })]);
    const agent = agents.at(-1)!;
    assert.equal(agent.starts.length, 0, 'no fresh agent');
    assert.deepEqual(agent.carriedOut, [`The reviewer approved your plan. Carry it out now:\n\n${PLAN}`]);
    assert.equal(toolResults(allEvents(host!, id), 'toolu_1')[0]?.isError, false);
  });

  it('an agent that reloads its conversation goes on with the message a restart cut off; one whose turn had ended is left idle', async () => {
    host = await open(() => new RecordingAgent());
    const { id } = await host.createSession(createRequest('Flip the flag'));
    await waitForStatus(host, id, 'running');
    await host.close();
    host = await open(() => withResume(new RecordingAgent(), 'reloaded'));
    await waitForStatus(host, id, 'running');
    assert.match(
      String(systemEvents(host, id, AGENT_RESUMED_SUBTYPE)[0]?.message),
      /Recording agent continued this session's conversation\. It goes on with the message it was answering\./,
    );
    const resumed = agents.at(-1)!;
    assert.equal(resumed.starts.length, 0, 'no fresh agent: the reloaded one goes on');
    assert.equal(resumed.messages.length, 1);
    assert.match(resumed.messages[0]!, /stopped while you were answering[\s\S]*The message:\n\nFlip the flag$/);

    // The turn ends; a restart now leaves the reloaded agent waiting for the person.
    resumed.ctx!.emit({ type: 'result', subtype: 'success', is_error: false, result: 'Flipped.' });
    resumed.ctx!.setStatus('idle');
    await waitForStatus(host, id, 'idle');
    await host.close();
    host = await open(() => withResume(new RecordingAgent(), 'reloaded'));
    await waitForStatus(host, id, 'idle');
    assert.doesNotMatch(String(systemEvents(host, id, AGENT_RESUMED_SUBTYPE).at(-1)?.message), /goes on/);
    assert.deepEqual(agents.at(-1)!.messages, [], 'nothing was asked again');
  });

  it('an agent whose resume fails says why in the lost notice', async () => {
    const id = await planThenRestart(() => withResume(new RecordingAgent(), { lost: 'session/load failed: No previous sessions found' }));
    assert.match(
      String(systemEvents(host!, id, AGENT_LOST_SUBTYPE)[0]?.message),
      /could not continue \(session\/load failed: No previous sessions found\)/,
    );
  });
});
