// Shared by the ACP tests: the fake agent's command line, a workspace, its record, and an
// AgentContext that records what an agent emits (until a test runs it under the real SessionHost).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { strict as assert } from 'node:assert';
import type { AcpAgent } from '../../src/sessions/acp/acpAgent';
import type { AgentContext } from '../../src/sessions/agent';
import { waitGone } from '../support/processes';
import type { AnyEvent, SessionStatus } from '../../src/core/protocol';

export const FAKE_AGENT = path.resolve(__dirname, '../fixtures/fake-acp-agent/fake-acp-agent.mjs');
export const SCENARIOS = path.resolve(__dirname, '../fixtures/fake-acp-agent/scenarios');

export interface FakeRun {
  workspace: string;
  record: string;
  argv: string[];
  cleanup(): Promise<void>;
}

/** A temp workspace (with a README and src/app.ts) and the fake agent's argv for `scenario`. */
export async function fakeRun(scenario: string | object): Promise<FakeRun> {
  const workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-acp-'));
  await writeFile(path.join(workspace, 'README.md'), '# Demo project\n');
  await mkdir(path.join(workspace, 'src'));
  await writeFile(path.join(workspace, 'src', 'app.ts'), 'export const original = true;\n');
  let scenarioPath: string;
  if (typeof scenario === 'string') {
    scenarioPath = path.join(SCENARIOS, scenario);
  } else {
    scenarioPath = path.join(workspace, '.scenario.json');
    await writeFile(scenarioPath, JSON.stringify(scenario));
  }
  const record = path.join(workspace, '.record.jsonl');
  return {
    workspace,
    record,
    argv: [process.execPath, FAKE_AGENT, scenarioPath, record],
    cleanup: () => rm(workspace, { recursive: true, force: true }),
  };
}

/** Stops `agent` (if any) and checks that its process is gone. */
export async function stopAgent(agent: AcpAgent | undefined): Promise<void> {
  const pid = agent?.pid;
  await agent?.stop();
  if (pid !== undefined) assert.ok(await waitGone(pid), `agent process ${pid} left behind`);
}

export interface RecordEntry {
  kind: string;
  [key: string]: unknown;
}

export async function readRecord(file: string): Promise<RecordEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return [];
  }
  // The fake appends while tests read: a line without its newline is still being written.
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as RecordEntry);
}

/** The JSON-RPC messages the fake agent received with this method. */
export function received(entries: RecordEntry[], method: string): Array<{ method: string; params: Record<string, unknown> }> {
  return entries
    .filter((entry) => entry.kind === 'received')
    .map((entry) => entry.message as { method?: string; params?: Record<string, unknown> })
    .filter((message) => message.method === method)
    .map((message) => ({ method: message.method as string, params: message.params ?? {} }));
}

/** Waits (bounded) for the fake's record to hold an entry of `kind`. */
export async function waitForRecord(file: string, kind: string, count = 1, timeoutMs = 8000): Promise<RecordEntry[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entries = (await readRecord(file)).filter((entry) => entry.kind === kind);
    if (entries.length >= count) return entries;
    if (Date.now() > deadline) throw new Error(`the fake agent's record has ${entries.length} "${kind}" entries, wanted ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
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
    return new Promise<T>((resolve, reject) => {
      const check = (): boolean => {
        const value = predicate();
        if (value) {
          cleanup();
          resolve(value);
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `timed out waiting for ${what}; events: ${JSON.stringify(this.events).slice(0, 3000)}; statuses: ${this.statuses.join(',')}; logs: ${this.logs.join(' | ').slice(0, 2000)}`,
          ),
        );
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      const waiter = (): void => void check();
      if (check()) return;
      this.waiters.add(waiter);
    });
  }

  /** The first control_request for ExitPlanMode not yet in `seen`. */
  waitForPlanRequest(seen = 0, timeoutMs = 8000): Promise<{ requestId: string; plan: string; toolUseId: string }> {
    return this.waitFor(
      () => {
        const requests = this.events.filter(
          (event) => event.type === 'control_request' && (event as { request?: { tool_name?: string } }).request?.tool_name === 'ExitPlanMode',
        );
        const request = requests[seen] as
          | { request_id: string; request: { input: { plan: string }; tool_use_id: string } }
          | undefined;
        return request ? { requestId: request.request_id, plan: request.request.input.plan, toolUseId: request.request.tool_use_id } : undefined;
      },
      timeoutMs,
      `ExitPlanMode control_request #${seen + 1}`,
    );
  }

  results(): Array<{ subtype: string; result?: string; is_error?: boolean }> {
    return this.events.filter((event) => event.type === 'result') as unknown as Array<{ subtype: string; result?: string; is_error?: boolean }>;
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

