// An ACP agent under test without a session host: RecordingContext is the AgentContext that
// records what the agent emits (events, statuses, log lines) and waits on it; FakeAgentRuns starts
// AcpAgents on the fake agent's scenarios and stops every one it started, checking that no
// process is left behind.
import { strict as assert } from 'node:assert';
import { AcpAgent } from '../../src/agents/acp/acpAgent';
import type { AcpAgentOptions } from '../../src/agents/acp/acpAgentOptions';
import type { AgentContext } from '../../src/agents/agent';
import type { AnyEvent, SessionStatus } from '../../src/core/protocol';
import { fakeRun, type FakeRun } from './fakeAcpAgent';
import { waitGone } from './processes';
import { waitFor } from './wait';

/** Stops `agent` (if any) and checks that its process is gone. */
export async function stopAgent(agent: AcpAgent | undefined): Promise<void> {
  const pid = agent?.pid;
  await agent?.stop();
  if (pid !== undefined) assert.ok(await waitGone(pid), `agent process ${pid} left behind`);
}

export interface FakeAgentRun {
  agent: AcpAgent;
  ctx: RecordingContext;
  run: FakeRun;
}

/** AcpAgents on the fake agent, each in a workspace of its own; `stopAll` in an afterEach. */
export class FakeAgentRuns {
  readonly #agents: AcpAgent[] = [];
  readonly #runs: FakeRun[] = [];

  /** A workspace for `scenario` (a scenario file name or the scenario itself), cleaned up by stopAll. */
  async prepare(scenario: string | object): Promise<FakeRun> {
    const run = await fakeRun(scenario);
    this.#runs.push(run);
    return run;
  }

  /** An AcpAgent on `run` (label "Fake (ACP)" unless `options` name one), started with `prompt`. */
  async startOn(run: FakeRun, options: Partial<AcpAgentOptions> = {}, prompt = 'Plan it'): Promise<FakeAgentRun> {
    const agent = this.track(new AcpAgent({ argv: run.argv, cwd: run.workspace, label: 'Fake (ACP)', stopGraceMs: 500, ...options }));
    const ctx = new RecordingContext();
    await agent.start(ctx, prompt);
    return { agent, ctx, run };
  }

  /** prepare, then startOn. */
  async start(scenario: string | object, options: Partial<AcpAgentOptions> = {}, prompt = 'Plan it'): Promise<FakeAgentRun> {
    return this.startOn(await this.prepare(scenario), options, prompt);
  }

  /** An agent made otherwise, stopped with the rest. */
  track(agent: AcpAgent): AcpAgent {
    this.#agents.push(agent);
    return agent;
  }

  async stopAll(): Promise<void> {
    for (const agent of this.#agents.splice(0)) await stopAgent(agent);
    for (const run of this.#runs.splice(0)) await run.cleanup();
  }
}

export class RecordingContext implements AgentContext {
  readonly sessionId = 'session-test';
  readonly events: AnyEvent[] = [];
  readonly statuses: Array<Exclude<SessionStatus, 'archived'>> = [];
  readonly logs: string[] = [];
  private readonly controller = new AbortController();
  private readonly waiters = new Set<() => void>();

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  emit(event: AnyEvent): void {
    this.events.push(event);
    this.wake();
  }

  setStatus(status: Exclude<SessionStatus, 'archived'>): void {
    this.statuses.push(status);
    this.wake();
  }

  log(line: string): void {
    this.logs.push(line);
  }

  abort(): void {
    this.controller.abort();
  }

  get status(): string | undefined {
    return this.statuses[this.statuses.length - 1];
  }

  /** Resolves when `predicate` holds; rejects after `timeoutMs` with what was seen. */
  waitFor<T>(predicate: () => T | undefined | false, timeoutMs = 8000, what = 'condition'): Promise<T> {
    // Truthy, as the agent tests read it: a count of 0 or an empty text is not there yet.
    return waitFor(predicate as () => T, {
      message: what,
      timeoutMs,
      until: (value) => Boolean(value),
      wakeOn: (wake) => {
        this.waiters.add(wake);
        return () => this.waiters.delete(wake);
      },
      detail: () =>
        `events: ${JSON.stringify(this.events).slice(0, 3000)}; statuses: ${this.statuses.join(',')}; logs: ${this.logs.join(' | ').slice(0, 2000)}`,
    });
  }

  /** The first control_request for ExitPlanMode not yet in `seen`. */
  waitForPlanRequest(seen = 0, timeoutMs = 8000): Promise<{ requestId: string; plan: string; toolUseId: string }> {
    return this.waitFor(
      () => {
        const requests = this.events.filter(
          (event) =>
            event.type === 'control_request' && (event as { request?: { tool_name?: string } }).request?.tool_name === 'ExitPlanMode',
        );
        const request = requests[seen] as { request_id: string; request: { input: { plan: string }; tool_use_id: string } } | undefined;
        return request
          ? { requestId: request.request_id, plan: request.request.input.plan, toolUseId: request.request.tool_use_id }
          : undefined;
      },
      timeoutMs,
      `ExitPlanMode control_request #${seen + 1}`,
    );
  }

  results(): Array<{ subtype: string; result?: string; is_error?: boolean }> {
    return this.events.filter((event) => event.type === 'result') as unknown as Array<{
      subtype: string;
      result?: string;
      is_error?: boolean;
    }>;
  }

  systemEvents(subtype: string): Array<Record<string, unknown>> {
    return this.events.filter((event) => event.type === 'system' && (event as { subtype?: string }).subtype === subtype) as Array<
      Record<string, unknown>
    >;
  }

  toolResult(toolUseId: string): { content?: unknown; is_error?: boolean } | undefined {
    for (const event of this.events) {
      if (event.type !== 'user') continue;
      const content = (event as { message?: { content?: unknown } }).message?.content;
      if (!Array.isArray(content)) continue;
      for (const block of content as Array<Record<string, unknown>>) {
        if (block.type === 'tool_result' && block.tool_use_id === toolUseId) return block as { content?: unknown; is_error?: boolean };
      }
    }
    return undefined;
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
