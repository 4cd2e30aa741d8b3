// A session that starts from a plan file (core/planFileSession.ts) on the real SessionHost with the
// scripted agent: the plan waits for a decision with no agent running; Approve starts a turn that
// carries it out (the approval in the log, read back as approved by the scanner, with the plan's
// hash), Reject starts one that revises it from the formatted feedback; a restart keeps it decidable.
import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionsError } from '../../src/core/errors';
import { planHash } from '../../src/core/decision';
import { formatRejectFeedback } from '../../src/core/feedback';
import { approvedPlan } from '../../src/core/executionProgress';
import { ExitPlanModeScanner } from '../../src/core/scanner';
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  AGENT_RESTARTED_SUBTYPE,
  controlResponseEvent,
  type CreateSessionRequest,
} from '../../src/core/protocol';
import { PLAN_FILE_SUBTYPE, planFileOf, planFileSessionRequest } from '../../src/core/planFileSession';
import type { Agent, AgentFactory, AgentStartOptions } from '../../src/agents/agent';
import { SessionHost } from '../../src/service/host/sessionHost';
import { FileSessionStore } from '../../src/service/store/sessionStore';
import { waitFor } from '../support/wait';
import { allEvents, pendingPlanRequest, scenarioFactory, toolResults, types, waitForStatus } from './hostTestKit';

const PLAN = '# Add a changelog\n\n1. Create CHANGELOG.md with the 1.0 entry.\n2. Link it from README.md.\n';
const SOURCE = '.cursor/plans/changelog.plan.md';

let ids = 0;
const request = (plan = PLAN): CreateSessionRequest =>
  planFileSessionRequest(planFileOf(plan, SOURCE), 'ultraplan: changelog', () => `t${++ids}`);

/** The scripted agent, with each start's prompt and options kept (the agent itself runs unchanged). */
async function recordingFactory(
  scenario: string,
): Promise<{ factory: AgentFactory; starts: Array<{ prompt: string; options?: AgentStartOptions }> }> {
  const inner = await scenarioFactory(scenario);
  const starts: Array<{ prompt: string; options?: AgentStartOptions }> = [];
  const factory: AgentFactory = (options) => {
    const agent = inner(options);
    const recorded: Agent = {
      label: agent.label,
      start: (ctx, prompt, startOptions) => {
        starts.push({ prompt, ...(startOptions ? { options: startOptions } : {}) });
        return agent.start(ctx, prompt, startOptions);
      },
      onUserMessage: (text) => agent.onUserMessage(text),
      onDecision: (requestId, decision) => agent.onDecision(requestId, decision),
      stop: () => agent.stop(),
    };
    return recorded;
  };
  return { factory, starts };
}

function scan(events: readonly unknown[]): ExitPlanModeScanner {
  const scanner = new ExitPlanModeScanner();
  scanner.ingest(events);
  return scanner;
}

async function refused(promise: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof SessionsError, `expected a SessionsError, got ${String(err)}`);
    assert.equal(err.status, 400);
    assert.match(err.message, message);
    return true;
  });
}

describe('A session from a plan file (SessionHost, scripted agent)', () => {
  let host: SessionHost | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  it('writes the plan as a pending ExitPlanMode request of the file and starts no agent', async () => {
    const { factory, starts } = await recordingFactory('approve.json');
    host = new SessionHost({ agentFactory: factory });
    const { id } = await host.createSession(request());
    await waitForStatus(host, id, 'requires_action');
    const events = allEvents(host, id);
    assert.deepEqual(types(events), ['control_request', 'user', 'system', 'assistant', 'control_request']);
    const origin = events.find((e) => e.type === 'system' && e.subtype === PLAN_FILE_SUBTYPE);
    assert.equal(origin?.source, SOURCE);
    assert.equal(origin?.plan_hash, planHash(PLAN));
    const scanner = scan(events);
    assert.equal(scanner.pendingPlan?.plan, PLAN, 'the panel reviews exactly the file text');
    assert.equal(starts.length, 0, 'no agent runs before the decision');
    assert.ok(!events.some((e) => e.type === 'system' && e.subtype === 'init'));
  });

  it('Approve: a turn out of plan mode carries it out; the log reads approved, bound to the plan hash; the approval is recorded once', async () => {
    const { factory, starts } = await recordingFactory('approve.json');
    let approvals = 0;
    host = new SessionHost({ agentFactory: factory, approvals: () => ({ approved: async () => void approvals++ }) });
    const { id } = await host.createSession(request());
    await waitForStatus(host, id, 'requires_action');
    const pending = pendingPlanRequest(allEvents(host, id));
    await host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })]);
    await waitForStatus(host, id, 'idle');
    const events = allEvents(host, id);
    assert.equal(starts.length, 1);
    assert.equal(starts[0]!.options?.carryOut, true);
    assert.equal(starts[0]!.options?.approvedPlanHash, planHash(PLAN));
    assert.match(starts[0]!.prompt, /approved the plan below \(written in \.cursor\/plans\/changelog\.plan\.md/);
    assert.ok(starts[0]!.prompt.endsWith(PLAN));
    const [result] = toolResults(events, pending.toolUseId);
    assert.ok(result && !result.isError && result.text.includes(`${APPROVED_PLAN_MARKER}${PLAN}`));
    const init = events.find((e) => e.type === 'system' && e.subtype === 'init');
    assert.equal(init?.permissionMode, 'default', 'the scripted agent starts out of plan mode');
    assert.ok(!events.some((e) => e.type === 'system' && e.subtype === AGENT_RESTARTED_SUBTYPE), 'no agent had stopped');
    assert.equal(types(events).at(-1), 'result:success');
    const revision = scan(events).revisions[0]!;
    assert.equal(revision.outcome.kind, 'approved');
    assert.equal(planHash(approvedPlan(revision)!), planHash(PLAN), 'the checklist is bound to the reviewed text');
    assert.equal(approvals, 1);
  });

  it('Approve with the plan edited: the edit is what the agent carries out and what the log approves', async () => {
    const { factory, starts } = await recordingFactory('approve.json');
    host = new SessionHost({ agentFactory: factory });
    const { id } = await host.createSession(request());
    await waitForStatus(host, id, 'requires_action');
    const pending = pendingPlanRequest(allEvents(host, id));
    const edited = `${PLAN}3. Mention it in CONTRIBUTING.md.\n`;
    await host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: edited } })]);
    await waitForStatus(host, id, 'idle');
    assert.ok(starts[0]!.prompt.endsWith(edited));
    assert.equal(starts[0]!.options?.approvedPlanHash, planHash(edited.trimEnd()));
    const revision = scan(allEvents(host, id)).revisions[0]!;
    assert.deepEqual(revision.outcome, { kind: 'approved', plan: edited.trimEnd(), edited: true });
    assert.equal(planHash(approvedPlan(revision)!), starts[0]!.options?.approvedPlanHash);
    assert.ok(toolResults(allEvents(host, id), pending.toolUseId)[0]!.text.includes(APPROVED_PLAN_EDITED_MARKER));
  });

  it('Reject with line comments: a planning turn revises it from the formatted feedback, and proposes a revision', async () => {
    const { factory, starts } = await recordingFactory('approve.json');
    host = new SessionHost({ agentFactory: factory });
    const { id } = await host.createSession(request());
    await waitForStatus(host, id, 'requires_action');
    const pending = pendingPlanRequest(allEvents(host, id));
    const feedback = formatRejectFeedback(PLAN, 'Keep the README untouched.', [{ startLine: 4, endLine: 4, text: 'No link here.' }]);
    await host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'deny', message: feedback })]);
    await waitForStatus(host, id, 'requires_action');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const events = allEvents(host, id);
    assert.equal(starts.length, 1);
    assert.equal(starts[0]!.options, undefined, 'planning, not carrying out');
    assert.ok(starts[0]!.prompt.includes(feedback), 'the feedback reaches the agent whole');
    assert.ok(starts[0]!.prompt.includes('> 2. Link it from README.md.'), 'with the commented line quoted');
    assert.ok(starts[0]!.prompt.includes(PLAN), 'with the plan as context');
    const init = events.find((e) => e.type === 'system' && e.subtype === 'init');
    assert.equal(init?.permissionMode, 'plan');
    const revisions = scan(events).revisions;
    assert.equal(revisions.length, 2, 'the file plan, then the agent revision');
    assert.equal(revisions[0]!.outcome.kind, 'rejected');
    assert.equal(revisions[1]!.outcome.kind, 'pending');
  });

  it('refuses a plan whose hash is not its own, an empty plan and a missing source, creating nothing', async () => {
    host = new SessionHost({ agentFactory: await scenarioFactory('approve.json') });
    const bad = (planFile: Record<string, unknown>): CreateSessionRequest => ({ ...request(), plan_file: planFile });
    await refused(
      host.createSession(bad({ ...planFileOf(PLAN, SOURCE), sha256: planHash('another plan') })),
      /sha256 is not the SHA-256 of the plan sent/,
    );
    await refused(host.createSession(bad({ plan: '  \n', sha256: planHash('  \n'), source: SOURCE })), /the plan is empty/);
    await refused(host.createSession(bad({ plan: PLAN, sha256: planHash(PLAN) })), /source/);
    await refused(host.createSession(bad({ ...planFileOf(PLAN, SOURCE), extra: 1 })), /extra/);
    assert.equal(host.listSessions().length, 0);
  });
});

describe('A session from a plan file across a restart (file store)', () => {
  let dataDir: string;
  let host: SessionHost | undefined;
  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-planfile-'));
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('comes back with its plan still decidable and no agent_lost notice; Approve then carries it out', async () => {
    const open = async () =>
      SessionHost.open({ agentFactory: await scenarioFactory('approve.json'), store: new FileSessionStore(dataDir) });
    host = await open();
    const { id } = await host.createSession(request());
    await waitForStatus(host, id, 'requires_action');
    const before = allEvents(host, id);
    await host.close();
    host = await open();
    assert.deepEqual(allEvents(host, id), before, 'nothing written about an agent that never ran');
    const pending = pendingPlanRequest(before);
    await host.appendEvents(id, [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })]);
    const reopened = host;
    const events = await waitFor(() => allEvents(reopened, id), {
      message: 'the carried-out turn to end',
      timeoutMs: 8000,
      until: (log) => types(log).at(-1) === 'result:success',
    });
    assert.equal(scan(events).revisions[0]!.outcome.kind, 'approved');
  });
});
