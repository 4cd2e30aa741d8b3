import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionsError } from '../../src/core/errors';
import { APPROVED_PLAN_MARKER, controlResponseEvent, userMessageEvent } from '../../src/core/protocol';
import { pollForApprovedPlan } from '../../src/core/poller';
import type { Agent, AgentFactory } from '../../src/agents/agent';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { AGENT_LOST_SUBTYPE, SessionHost } from '../../src/service/host/sessionHost';
import { parseScenario } from '../../src/agents/catalogue/scenario';
import { scriptedAgentFactory } from '../../src/agents/scripted/scriptedAgent';
import { FileSessionStore } from '../../src/service/store/sessionStore';
import { allEvents, createRequest, pendingPlanRequest, scenarioFactory, toolResults, types, waitForStatus } from './hostTestKit';
import { watchPhases } from '../support/pollPhases';
import { waitFor } from '../support/wait';

async function rejects(promise: Promise<unknown>, kind: SessionsError['kind'], message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof SessionsError, `expected a SessionsError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    assert.match(err.message, message);
    return true;
  });
}

function throwsKind(fn: () => unknown, kind: SessionsError['kind'], message: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof SessionsError && err.kind === kind && message.test(err.message));
}

describe('SessionHost (in memory)', () => {
  let host: SessionHost;
  afterEach(async () => host?.close());

  it('records the set-mode request and the prompt first, stamps strictly increasing ids, uuid and session_id', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('approve.json') });
    const session = await host.createSession(createRequest('Add a changelog'));
    assert.equal(session.type, 'session');
    assert.equal(session.title, 'ultraplan: test');
    await waitForStatus(host, session.id, 'requires_action');
    const events = allEvents(host, session.id);
    assert.equal(events[0]?.type, 'control_request');
    assert.equal((events[0]?.request as { subtype: string }).subtype, 'set_permission_mode');
    assert.equal(events[1]?.type, 'user');
    assert.equal((events[1]?.message as { content: string }).content, 'Add a changelog');
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      assert.equal(e.session_id, session.id);
      assert.match(String(e.uuid), /^[0-9a-f-]{36}$/);
      if (i > 0) assert.ok(events[i - 1]!.id < e.id, `${events[i - 1]!.id} < ${e.id}`);
    }
    assert.deepEqual(types(events).slice(2), ['system', 'assistant', 'assistant', 'user', 'assistant', 'control_request']);
  });

  it('approve: the decision reaches the agent, which answers with the marker, runs onApprove and ends its turn idle', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('approve.json') });
    const { id } = await host.createSession(createRequest());
    await waitForStatus(host, id, 'requires_action');
    const pending = pendingPlanRequest(allEvents(host, id));
    await host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })]);
    await waitForStatus(host, id, 'idle');
    const events = allEvents(host, id);
    const [result] = toolResults(events, pending.toolUseId);
    assert.ok(result && !result.isError);
    assert.ok(result.text.includes(`${APPROVED_PLAN_MARKER}${pending.plan}`));
    assert.equal(types(events).at(-1), 'result:success');
    assert.ok(
      events.some((e) => e.type === 'control_response'),
      'the decision is in the log',
    );
  });

  it('refuses a control_response for an unknown request_id and a second answer, appending nothing', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('approve.json') });
    const { id } = await host.createSession(createRequest());
    await waitForStatus(host, id, 'requires_action');
    const pending = pendingPlanRequest(allEvents(host, id));
    const before = allEvents(host, id).length;
    await rejects(
      host.appendEvents(id, [controlResponseEvent('req_nope', { behavior: 'deny', message: 'no' })]),
      'bad_request',
      /no control_request req_nope awaits an answer/,
    );
    // The set-mode request is the client's own, not the agent's: not answerable either.
    const setModeId = allEvents(host, id)[0]!.request_id as string;
    await rejects(
      host.appendEvents(id, [controlResponseEvent(setModeId, { behavior: 'deny', message: 'x' })]),
      'bad_request',
      /awaits an answer/,
    );
    assert.equal(allEvents(host, id).length, before);

    const decision = controlResponseEvent(pending.requestId, { behavior: 'deny', message: 'Too vague' });
    // Two answers racing: exactly one is taken.
    const outcomes = await Promise.allSettled([host.appendEvents(id, [decision]), host.appendEvents(id, [decision])]);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    assert.ok(refused.reason instanceof SessionsError && refused.reason.kind === 'conflict');
    assert.match(refused.reason.message, /already answered/);
    await rejects(host.appendEvents(id, [decision]), 'conflict', /already answered/);
    // A batch that holds a bad event appends nothing, not even its good events.
    const countNow = allEvents(host, id).length;
    await rejects(host.appendEvents(id, [userMessageEvent('fine'), decision]), 'conflict', /events\[1\]/);
    assert.equal(allEvents(host, id).filter((e) => e.type === 'control_response').length, 1);
    assert.ok(allEvents(host, id).length >= countNow);
    assert.ok(!allEvents(host, id).some((e) => e.type === 'user' && (e.message as { content: unknown }).content === 'fine'));
  });

  it('refuses events only an agent writes, tool results from a client, bad events and too many events', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('question.json'), limits: { maxEventsPerAppend: 3 } });
    const { id } = await host.createSession(createRequest());
    await waitForStatus(host, id, 'idle');
    const before = allEvents(host, id).length;
    await rejects(
      host.appendEvents(id, [{ type: 'assistant', message: { role: 'assistant', content: [] } }]),
      'bad_request',
      /only the agent writes "assistant"/,
    );
    await rejects(host.appendEvents(id, [{ type: 'result', subtype: 'success' }]), 'bad_request', /only the agent writes "result"/);
    await rejects(
      host.appendEvents(id, [
        { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: '## Approved Plan:\nx' }] } },
      ]),
      'bad_request',
      /tool results come from the agent/,
    );
    await rejects(host.appendEvents(id, [{ type: 'user', message: { role: 'robot', content: 'x' } }]), 'bad_request', /events\[0\]/);
    await rejects(host.appendEvents(id, []), 'bad_request', /non-empty/);
    await rejects(
      host.appendEvents(
        id,
        [1, 2, 3, 4].map((n) => userMessageEvent(`m${n}`)),
      ),
      'bad_request',
      /at most 3 events/,
    );
    await rejects(host.appendEvents('session_missing', [userMessageEvent('x')]), 'not_found', /no session/);
    assert.equal(allEvents(host, id).length, before);
  });

  it('archive stops the agent; later appends and a second archive get conflict', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('slow.json') });
    const { id } = await host.createSession(createRequest());
    await host.archive(id);
    const count = allEvents(host, id).length;
    assert.equal(host.getSession(id).session_status, 'archived');
    await rejects(host.appendEvents(id, [userMessageEvent('hello?')]), 'conflict', /archived/);
    await rejects(host.archive(id), 'conflict', /already archived/);
    await new Promise((r) => setTimeout(r, 1700)); // past the scenario's first sleep
    assert.equal(allEvents(host, id).length, count, 'a stopped agent emits nothing');
  });

  it('pages events by after_id with limit, has_more, first_id/last_id; a cursor that is not an id still works', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('approve.json') });
    const { id } = await host.createSession(createRequest());
    await waitForStatus(host, id, 'requires_action');
    const events = allEvents(host, id);
    const first = host.readEvents(id, null, 3);
    assert.deepEqual(
      first.data.map((e) => e.id),
      events.slice(0, 3).map((e) => e.id),
    );
    assert.equal(first.has_more, true);
    assert.equal(first.first_id, events[0]!.id);
    assert.equal(first.last_id, events[2]!.id);
    const rest = host.readEvents(id, first.last_id, 1000);
    assert.deepEqual(
      rest.data.map((e) => e.id),
      events.slice(3).map((e) => e.id),
    );
    assert.equal(rest.has_more, false);
    const empty = host.readEvents(id, rest.last_id, 10);
    assert.deepEqual(empty, { data: [], has_more: false, first_id: null, last_id: null });
    const between = host.readEvents(id, `${events[1]!.id}~`, 1);
    assert.equal(between.data[0]?.id, events[2]!.id);
    throwsKind(() => host.readEvents(id, null, 0), 'bad_request', /limit/);
    throwsKind(() => host.readEvents(id, null, 1001), 'bad_request', /limit/);
    throwsKind(() => host.readEvents('nope', null), 'not_found', /no session/);
  });

  it('validates creation: title, prompt, event count, session limit', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('approve.json'), limits: { maxSessions: 1, maxEventsPerAppend: 2 } });
    await rejects(host.createSession(createRequest('x', '   ')), 'bad_request', /title must not be blank/);
    await rejects(host.createSession(createRequest('x', 'two\nlines')), 'bad_request', /one line/);
    await rejects(host.createSession(createRequest('x', 'a'.repeat(501))), 'bad_request', /title/);
    await rejects(host.createSession({ title: 't', events: [] }), 'bad_request', /exactly one user message \(the prompt\)/);
    const tooMany = createRequest();
    tooMany.events.push(...tooMany.events);
    await rejects(host.createSession(tooMany), 'bad_request', /at most 2 events/);
    await rejects(host.createSession({ title: 't', events: [{ type: 'nope' }] } as never), 'bad_request', /invalid session/);
    assert.equal(host.listSessions().length, 0);
    await host.createSession(createRequest());
    await rejects(host.createSession(createRequest()), 'conflict', /limit of 1 sessions/);
    assert.equal(host.listSessions().length, 1);
  });

  it('tells subscribers each committed event in order and each status change', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('slow.json') });
    const { id } = await host.createSession(createRequest());
    const seen: string[] = [];
    const statuses: string[] = [];
    const unsubscribe = host.subscribe(id, (n) => {
      if (n.event) seen.push(n.event.id);
      if (n.status) statuses.push(n.status);
    });
    await waitForStatus(host, id, 'requires_action', 8000);
    unsubscribe();
    const ids = allEvents(host, id).map((e) => e.id);
    assert.deepEqual(seen, ids.slice(ids.length - seen.length), 'the newest events, in log order');
    assert.ok(seen.length > 0);
    assert.deepEqual(statuses, ['requires_action']);
  });

  it('an agent that fails to start leaves the session idle with an error result, not a crash', async () => {
    const broken: Agent = {
      label: 'broken',
      start: async () => {
        throw new Error('cannot spawn');
      },
      onUserMessage() {},
      onDecision() {},
      stop: async () => {},
    };
    host = new SessionHost({ agentFactory: () => broken });
    const { id } = await host.createSession(createRequest());
    await waitForStatus(host, id, 'idle');
    const last = allEvents(host, id).at(-1)!;
    assert.equal(last.type, 'result');
    assert.equal(last.subtype, 'error_during_execution');
    assert.deepEqual(last.errors, ['cannot spawn']);
  });
});

describe('SessionHost (file store, restarts in process)', () => {
  let dataDir: string;
  let host: SessionHost | undefined;
  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-host-'));
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const open = async (scenario: string, log?: (line: string) => void) =>
    SessionHost.open({ agentFactory: await scenarioFactory(scenario), store: new FileSessionStore(dataDir, { log }), log });

  it('reloads every session and event; a plan awaiting a decision can still be decided after the restart', async () => {
    host = await open('approve.json');
    const { id } = await host.createSession(createRequest());
    await waitForStatus(host, id, 'requires_action');
    const before = allEvents(host, id);
    const resourceBefore = host.getSession(id);
    await host.close();

    host = await open('approve.json');
    assert.deepEqual(allEvents(host, id), before);
    assert.deepEqual(host.getSession(id), resourceBefore, 'status, updated_at and the rest come back as they were');
    assert.equal(host.getSession(id).session_status, 'requires_action');
    const pending = pendingPlanRequest(before);
    await host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })]);
    await waitForStatus(host, id, 'idle');
    assert.equal(toolResults(allEvents(host, id), pending.toolUseId).length, 1);
    // Answered before the next restart: still answered after it.
    await host.close();
    host = await open('approve.json');
    await rejects(
      host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: {} })]),
      'conflict',
      /already answered/,
    );
  });

  it('a scripted agent stopped mid-run resumes from its step index without repeating steps', async () => {
    host = await open('slow.json');
    const { id } = await host.createSession(createRequest());
    await new Promise((r) => setTimeout(r, 200)); // inside the first sleep
    await host.close();
    host = await open('slow.json');
    await waitForStatus(host, id, 'requires_action', 8000);
    const texts = allEvents(host, id)
      .filter((e) => e.type === 'assistant')
      .flatMap((e) => (e.message as { content: Array<{ text?: string }> }).content.map((b) => b.text ?? ''));
    assert.deepEqual(
      texts.filter((t) => t.startsWith('Step')),
      ['Step one.', 'Step two, after a pause.'],
    );
  });

  it('an agent that takes long to resume says so in the log while it does, so the service is never silent while busy', async () => {
    host = await open('slow.json');
    const { id } = await host.createSession(createRequest());
    await new Promise((r) => setTimeout(r, 200)); // inside the first sleep: it has a checkpoint to resume from
    await host.close();
    const lines: string[] = [];
    const scripted = await scenarioFactory('slow.json');
    let resumes = 0;
    // The scripted agent, its resume held back 1 s as a slow agent's session/load would be.
    const slowResume: AgentFactory = (options) => {
      const agent = scripted(options);
      const resume = agent.resume?.bind(agent);
      if (!resume) throw new Error('the scripted agent resumes');
      return Object.assign(agent, {
        resume: async (ctx: Parameters<typeof resume>[0], checkpoint: unknown) => {
          resumes++;
          await new Promise((r) => setTimeout(r, 1_000));
          return resume(ctx, checkpoint);
        },
      });
    };
    host = await SessionHost.open({
      agentFactory: slowResume,
      store: new FileSessionStore(dataDir),
      log: (l) => lines.push(l),
      progressLogMs: 300,
    });
    assert.equal(resumes, 1);
    const progress = lines.filter((l) => l.startsWith(`session ${id}: resuming its agent: still going after`));
    assert.ok(progress.length >= 2, `progress lines while the resume took 1 s:\n${lines.join('\n')}`);
    const count = lines.length;
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(lines.slice(count).filter((l) => l.includes('still going')).length, 0, 'nothing more once the resume is done');
  });

  it('drops a torn last line with a log line and keeps appending after it', async () => {
    host = await open('approve.json');
    const { id } = await host.createSession(createRequest());
    await waitForStatus(host, id, 'requires_action');
    const before = allEvents(host, id);
    await host.close();
    await fs.appendFile(path.join(dataDir, 'sessions', id, 'log.jsonl'), '{"t":"event","event":{"type":"assis');
    const lines: string[] = [];
    host = await open('approve.json', (l) => lines.push(l));
    assert.ok(
      lines.some((l) => /dropping a torn last line/.test(l)),
      lines.join('\n'),
    );
    assert.deepEqual(allEvents(host, id), before);
    await host.appendEvents(id, [userMessageEvent('still here')]);
    await host.close();
    host = await open('approve.json');
    assert.equal((allEvents(host, id).at(-1)?.message as { content: string }).content, 'still here');
  });

  it('a session whose agent cannot resume comes back idle with an agent_lost event; a user message starts a new agent', async () => {
    host = await open('slow.json');
    const { id } = await host.createSession(createRequest());
    await host.close();
    // A different scenario: the checkpoint's fingerprint no longer matches.
    const reopened = await SessionHost.open({
      agentFactory: scriptedAgentFactory(parseScenario({ steps: [{ ask: 'Fresh start?' }] })),
      store: new FileSessionStore(dataDir),
    });
    host = reopened;
    await waitForStatus(host, id, 'idle');
    const lost = allEvents(host, id).filter((e) => e.type === 'system' && e.subtype === AGENT_LOST_SUBTYPE);
    assert.equal(lost.length, 1);
    assert.match(String(lost[0]!.message), /could not continue/);
    await host.appendEvents(id, [userMessageEvent('go on')]);
    // The session is idle already; wait for the fresh agent's question itself (bounded).
    const texts = () =>
      allEvents(reopened, id).flatMap((e) =>
        e.type === 'assistant' ? [(e.message as { content: Array<{ text?: string }> }).content[0]?.text] : [],
      );
    await waitFor(texts, { message: "the agent's fresh start", timeoutMs: 10_000, until: (said) => said.at(-1) === 'Fresh start?' });
    await waitForStatus(host, id, 'idle');
  });
});

describe('InProcessBackend', () => {
  it('drives the poller to an approved plan, woken by the host instead of sleeping the interval', async () => {
    const host = new SessionHost({ agentFactory: await scenarioFactory('approve.json') });
    const backend = new InProcessBackend({ host, label: 'Embedded · scripted' });
    try {
      const session = await backend.createSession(createRequest());
      const started = Date.now();
      const approved = pollForApprovedPlan({
        sessionId: session.id,
        transport: backend.transport,
        pollIntervalMs: 60_000, // a wake-up, not the interval, must move it
        ...watchPhases((phase, detail) => {
          if (phase !== 'plan_ready') return;
          const pending = pendingPlanRequest(allEvents(host, session.id));
          assert.equal(detail.pendingPlan?.plan, pending.plan);
          void backend.sendEvents(session.id, [
            controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } }),
          ]);
        }),
      });
      const result = await approved;
      assert.equal(result.executionTarget, 'remote');
      assert.match(result.plan, /Add a CHANGELOG/);
      assert.ok(Date.now() - started < 30_000);
      await backend.archive(session.id);
      await backend.archive(session.id); // already archived counts as done
      assert.equal((await backend.getSession(session.id)).session_status, 'archived');
    } finally {
      await backend.dispose();
    }
  });

  it('forAgent binds the agent at launch: a later choice does not swap the agent of a session being created', async () => {
    const host = new SessionHost({ agentFactory: scriptedAgentFactory(parseScenario({ steps: [{ say: 'host default' }] })) });
    const backend = new InProcessBackend({ host });
    try {
      // Two launches chose different agents before either created its session.
      const first = backend.forAgent(scriptedAgentFactory(parseScenario({ steps: [{ ask: 'first agent asks' }] })));
      const second = backend.forAgent(scriptedAgentFactory(parseScenario({ steps: [{ ask: 'second agent asks' }] })));
      const [b, a] = await Promise.all([second.createSession(createRequest()), first.createSession(createRequest())]);
      const question = (id: string) =>
        waitFor(
          () =>
            allEvents(host, id)
              .flatMap((e) => (e.type === 'assistant' ? JSON.stringify(e) : []))
              .find((t) => t.includes('agent asks')),
          `the question of session ${id}`,
        );
      assert.match(await question(a!.id), /first agent asks/);
      assert.match(await question(b!.id), /second agent asks/);
      // The view shares the host: sessions, lifecycle and transport are the backend's own.
      assert.equal(first.transport, backend.transport);
      await first.dispose();
      assert.equal((await backend.getSession(a!.id)).id, a!.id, 'disposing a view leaves the host open');
    } finally {
      await backend.dispose();
    }
  });
});
