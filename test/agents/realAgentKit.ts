// A real ACP agent through the real SessionHost and InProcessBackend, its model scripted on
// 127.0.0.1: a throwaway workspace and home, the agent processes it started (to check that none is
// left), and the helpers the per-agent tests share to drive a session as the editor does.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ToolPermissionTracker, permissionResponseEvent, type ToolPermissionRequest } from '../../src/core/permissionRequests';
import { followUntilResult, pollForApprovedPlan, type PollPhase } from '../../src/core/poller';
import { controlResponseEvent, userMessageEvent } from '../../src/core/protocol';
import { UltraplanPollError } from '../../src/core/errors';
import { AcpAgent } from '../../src/agents/acp/acpAgent';
import type { AcpAgentOptions } from '../../src/agents/acp/acpAgentOptions';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { SessionHost } from '../../src/service/host/sessionHost';
import type { ModelApiFamily, ModelRequestView, ScenarioRound } from '../support/modelApi/scenario';
import { Scenario, ScriptedModelServer } from '../support/modelApi/scenario';
import { assertAgentGroupsGone, killGroupsLeft } from '../support/processes';
import { allEvents, createRequest } from '../service/hostTestKit';
import { standIn } from '../support/standIn';
import { watchPhases, type PollPhaseDetail } from '../support/pollPhases';
import { ORIGINAL_APP } from '../support/acpFixtures';
import { formatRejectFeedback } from '../../src/core/feedback';

export { ORIGINAL_APP };
/** The first plan the scripted models propose for ORIGINAL_APP. */
export const PLAN_V1 = '# Plan: flip the flag\n\n1. Set `original` to false in src/app.ts.\n';
/** A Reject of PLAN_V1 as the panel sends it: feedback, and a line comment under its quoted line. */
export const PLAN_V1_FEEDBACK = formatRejectFeedback(PLAN_V1, 'Also add src/why.ts explaining it.', [
  { startLine: 3, endLine: 3, text: 'Keep the export name.' },
]);
/** The file the revised plan adds. */
export const WHY_TS = 'export const why = "retired";\n';

/**
 * The plan loop the full-loop tests script: the agent's question is answered "src/app.ts", PLAN_V1
 * is rejected with PLAN_V1_FEEDBACK, and the revision is approved.
 */
export const ANSWER_REJECT_APPROVE: { answers: string[]; decisions: PlanDecision[] } = {
  answers: ['src/app.ts'],
  decisions: [{ behavior: 'deny', message: PLAN_V1_FEEDBACK }, { behavior: 'allow' }],
};

/** The step a revision of PLAN_V1 adds: the asked-for one when the feedback and its quoted line reached the model. */
export function revisedStep(view: ModelRequestView): string {
  const heard = view.lastUser.text.includes('Also add src/why.ts') && view.lastUser.text.includes('> 1. Set `original` to false');
  return heard ? 'Add src/why.ts.' : 'No feedback reached me.';
}

export interface RealAgentSetup {
  family: ModelApiFamily;
  rounds: readonly ScenarioRound[];
  argv: string[];
  label: string;
  env: (home: string, modelUrl: string) => Record<string, string>;
  agent?: Partial<AcpAgentOptions>;
  /** Files to put in the throwaway home before the agent starts (relative to it). */
  homeFiles?: (home: string, workspace: string) => Record<string, string>;
}

export class RealAgentRun {
  readonly agents: AcpAgent[] = [];
  host!: SessionHost;
  backend!: InProcessBackend;
  model!: ScriptedModelServer;
  workspace = '';
  home = '';

  /** Workspace with README.md and src/app.ts; the model server; the host with the real agent. */
  async open(setup: RealAgentSetup): Promise<this> {
    this.workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-real-ws-'));
    this.home = await mkdtemp(path.join(tmpdir(), 'ultraplan-real-home-'));
    await writeFile(path.join(this.workspace, 'README.md'), '# Demo project\n');
    await mkdir(path.join(this.workspace, 'src'));
    await writeFile(path.join(this.workspace, 'src', 'app.ts'), ORIGINAL_APP);
    for (const [name, text] of Object.entries(setup.homeFiles?.(this.home, this.workspace) ?? {})) {
      await mkdir(path.dirname(path.join(this.home, name)), { recursive: true });
      await writeFile(path.join(this.home, name), text);
    }
    this.model = new ScriptedModelServer(setup.family, new Scenario(setup.rounds));
    const url = await this.model.start();
    const options: AcpAgentOptions = {
      argv: setup.argv,
      cwd: this.workspace,
      env: setup.env(this.home, url),
      // Only `env`: no login or key of this machine reaches the agent.
      inheritEnv: false,
      label: setup.label,
      stopGraceMs: 2000,
      ...setup.agent,
    };
    this.host = new SessionHost({
      agentFactory: () => {
        const agent = new AcpAgent(options);
        this.agents.push(agent);
        return agent;
      },
    });
    this.backend = new InProcessBackend({ host: this.host, label: `Embedded · ${setup.label}` });
    return this;
  }

  get agent(): AcpAgent {
    const agent = this.agents[0];
    if (!agent) throw new Error('no agent started yet');
    return agent;
  }

  events(sessionId: string) {
    return allEvents(this.host, sessionId);
  }

  /** How each agent turn of the session ended, in order: its `result` events' stop reason and final text. */
  turnEnds(sessionId: string): Array<[string | undefined, string | undefined]> {
    return this.events(sessionId)
      .filter((event) => event.type === 'result')
      .map((event) => [(event as { stop_reason?: string }).stop_reason, (event as { result?: string }).result]);
  }

  systemEvents(sessionId: string, subtype: string): Array<Record<string, unknown>> {
    return this.events(sessionId).filter(
      (event) => event.type === 'system' && (event as { subtype?: string }).subtype === subtype,
    ) as Array<Record<string, unknown>>;
  }

  /** A workspace file's path, from its path relative to the workspace. */
  file(relative: string): string {
    return path.join(this.workspace, ...relative.split('/'));
  }

  read(relative: string): Promise<string> {
    return readFile(this.file(relative), 'utf8');
  }

  app(): Promise<string> {
    return this.read('src/app.ts');
  }

  /** What a failed test's run saw: the scripted model's requests and each session's events, in short. */
  describeFailure(): string {
    const lines = [`      scripted model requests: ${this.model?.describe() ?? '(no model)'}`];
    for (const session of this.host?.listSessions() ?? []) {
      const events = this.events(session.id).map((event) => JSON.stringify(event).slice(0, 300));
      lines.push(`      session ${session.id} (${session.session_status}), ${events.length} events:`, ...events.map((e) => `        ${e}`));
    }
    return lines.join('\n');
  }

  /** Archives every session and checks each agent's process group is empty. */
  async close(): Promise<void> {
    const pids = this.agents.map((agent) => agent.pid).filter((pid): pid is number => pid !== undefined);
    try {
      await this.backend?.dispose();
      await assertAgentGroupsGone(pids);
    } finally {
      killGroupsLeft(pids);
      await this.model?.close();
      await rm(this.workspace, { recursive: true, force: true });
      await rm(this.home, { recursive: true, force: true });
    }
  }
}

/** A new RealAgentRun for each test of the enclosing describe, closed after it. */
export function eachRealAgentRun(): RealAgentRun {
  let current: RealAgentRun | undefined;
  beforeEach(() => {
    current = new RealAgentRun();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && current) console.log(current.describeFailure());
    await current?.close();
    current = undefined;
  });
  return standIn(() => current, 'eachRealAgentRun()');
}

export type PlanDecision = { behavior: 'allow' } | { behavior: 'deny'; message: string };

/**
 * Plans as the editor does: each question is answered with the next of `answers`, each plan gets
 * the next of `decisions`; returns once a plan is approved, with every plan and question seen.
 */
export async function planUntilApproved(
  run: RealAgentRun,
  sessionId: string,
  script: { decisions: PlanDecision[]; answers?: string[]; timeoutMs: number },
) {
  const plans: string[] = [];
  const questions: string[] = [];
  const phases: Array<{ phase: PollPhase; detail: PollPhaseDetail }> = [];
  const answers = [...(script.answers ?? [])];
  const approved = await pollForApprovedPlan({
    sessionId,
    transport: run.backend.transport,
    pollIntervalMs: 50,
    timeoutMs: script.timeoutMs,
    ...watchPhases((phase, detail) => {
      phases.push({ phase, detail });
      if (phase === 'needs_input' && detail.question && questions[questions.length - 1] !== detail.question) {
        questions.push(detail.question);
        const answer = answers.shift();
        if (answer !== undefined) void run.backend.sendEvents(sessionId, [userMessageEvent(answer)]);
      }
      if (phase === 'plan_ready' && detail.pendingPlan?.requestId) {
        const decision = script.decisions[plans.length];
        plans.push(detail.pendingPlan.plan ?? '');
        if (!decision) return;
        void run.backend.sendEvents(sessionId, [
          controlResponseEvent(
            detail.pendingPlan.requestId,
            decision.behavior === 'allow' ? { behavior: 'allow', updatedInput: { plan: detail.pendingPlan.plan ?? '' } } : decision,
          ),
        ]);
      }
    }),
  });
  return { approved, plans, questions, phases };
}

/** After approval: follows the execution to its result, allowing each permission the agent asks. */
export async function executeAllowing(
  run: RealAgentRun,
  sessionId: string,
  approved: Awaited<ReturnType<typeof pollForApprovedPlan>>,
  timeoutMs: number,
) {
  const tracker = new ToolPermissionTracker();
  const asked: ToolPermissionRequest[] = [];
  const answers: Array<Promise<void>> = [];
  const result = await followUntilResult({
    sessionId,
    transport: run.backend.transport,
    pollIntervalMs: 50,
    timeoutMs,
    scanner: approved.scanner,
    initialCursor: approved.cursor,
    onPoll: (poll) => {
      for (const request of tracker.ingestParsed(poll.batch).opened) {
        asked.push(request);
        answers.push(
          run.backend
            .sendEvents(sessionId, [permissionResponseEvent(request, 'allow')])
            .then(() => void tracker.markAnswered(request.requestId)),
        );
      }
    },
  });
  await Promise.all(answers);
  return { result, asked };
}

/** Plans until the session fails (it must, within `timeoutMs`); returns its result event. */
export async function planUntilFailed(run: RealAgentRun, timeoutMs: number): Promise<{ result?: string; is_error?: boolean }> {
  const session = await run.backend.createSession(createRequest('Plan anything'));
  await assert.rejects(
    pollForApprovedPlan({ sessionId: session.id, transport: run.backend.transport, pollIntervalMs: 50, timeoutMs }),
    (error: unknown) => error instanceof UltraplanPollError && error.reason === 'terminated',
  );
  const result = run.events(session.id).find((event) => event.type === 'result') as { result?: string; is_error?: boolean } | undefined;
  assert.equal(result?.is_error, true);
  return result ?? {};
}

/** Rounds of a model that only answers HTTP errors. */
export const failingModel = (count = 50): ScenarioRound[] =>
  Array.from({ length: count }, () => () => ({ error: { status: 503, message: 'scripted: overloaded' } }));

/** Once the model was asked (and never answers), kills the agent; the session must fail and say so. */
export async function crashMidTurn(run: RealAgentRun, timeoutMs: number): Promise<string> {
  const failed = planUntilFailed(run, timeoutMs);
  await run.model.waitForRound(1, timeoutMs);
  process.kill(run.agent.pid as number, 'SIGKILL');
  return (await failed).result ?? '';
}

export { createRequest };
