// Shared rig for the client's integration tests: the real server process (startServer), the fault
// proxy in front of it, and a SessionsClient + HttpBackend talking through the proxy; plus a
// scripted reviewer that answers the poller's phases the way the review panel would.
import * as path from 'node:path';
import type { PollPhase } from '../../src/core/poller';
import {
  ControlRequestEventSchema,
  controlResponseEvent,
  setPlanModeEvent,
  userMessageEvent,
  type PermissionDecision,
} from '../../src/core/protocol';
import { DEFAULT_REQUEST_TIMEOUT_MS, SessionsClient } from '../../src/client/sessionsClient';
import { HttpBackend } from '../../src/client/httpBackend';
import type { StreamingTransportOptions } from '../../src/client/eventStream';
import { startFaultProxy, type FaultProxy } from '../support/faultProxy';
import { EXAMPLES_DIR, startServer, type ServerProcess, type StartServerOptions } from '../support/serverProcess';
import type { PollPhaseDetail } from '../support/pollPhases';
import { waitFor } from '../support/wait';

export type TransportMode = 'polling' | 'stream';
export const MODES: readonly TransportMode[] = ['polling', 'stream'];

export const scenario = (name: string): string => path.join(EXAMPLES_DIR, `${name}.json`);

export interface Rig {
  server: ServerProcess;
  proxy: FaultProxy;
  client: SessionsClient;
  backend: HttpBackend;
  close(): Promise<void>;
}

export interface RigOptions {
  mode: TransportMode;
  requestTimeoutMs?: number;
  server?: StartServerOptions;
  /** Reuse a running server (the rig then does not stop it). */
  reuse?: ServerProcess;
  token?: () => Promise<string>;
  stream?: Omit<StreamingTransportOptions, 'client'>;
}

export async function startRig(options: RigOptions): Promise<Rig> {
  const server = options.reuse ?? (await startServer(options.server));
  const proxy = await startFaultProxy({ target: server.url });
  const rig = clientRig(server, proxy, options);
  return {
    ...rig,
    async close() {
      await rig.backend.dispose();
      await proxy.close();
      if (!options.reuse) await server.stop();
    },
  };
}

/** A fresh client and backend over an existing server and proxy (a "restarted" client). */
export function clientRig(server: ServerProcess, proxy: FaultProxy, options: RigOptions): Omit<Rig, 'close'> {
  const client = new SessionsClient({
    baseUrl: proxy.url,
    getToken: options.token ?? (async () => server.token ?? ''),
    // The product's bound unless the test is about the bound: a busy machine's slow answer is no fault.
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  });
  const backend = new HttpBackend({
    client,
    preferStream: options.mode === 'stream',
    stream: { initialBackoffMs: 20, maxBackoffMs: 200, ...options.stream },
  });
  return { server, proxy, client, backend };
}

export async function createPlanSession(rig: Pick<Rig, 'backend'>, prompt = 'Plan the change.'): Promise<string> {
  const session = await rig.backend.createSession({
    title: 'ultraplan: integration test',
    events: [
      { type: 'event', data: setPlanModeEvent(`set-mode-${Math.random().toString(36).slice(2)}`) },
      { type: 'event', data: userMessageEvent(prompt) },
    ],
  });
  return session.id;
}

/** Poll options per mode: polling at a short interval; the stream at the default 3 s, so it is the wake-ups that drive it. */
export function pollInterval(mode: TransportMode): number {
  return mode === 'polling' ? 100 : 3_000;
}

/** Every raw event of a session (no type skipped), for assertions on the log itself. */
export async function rawEvents(client: SessionsClient, sessionId: string): Promise<Array<Record<string, unknown>>> {
  const all: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const read = await client.readEventsPage(sessionId, cursor);
    const items = read.data as Array<{ sequence_num: number; payload: Record<string, unknown> }>;
    all.push(...items.map((i) => i.payload));
    if (!read.next_cursor) break;
    cursor = read.next_cursor;
  }
  return all;
}

/** The request_id of the can_use_tool control_request for `toolUseId` (it may trail the tool_use). */
export async function requestIdFor(client: SessionsClient, sessionId: string, toolUseId: string): Promise<string> {
  const requestId = async () => {
    for (const event of await rawEvents(client, sessionId)) {
      const parsed = ControlRequestEventSchema.safeParse(event);
      if (parsed.success && 'tool_use_id' in parsed.data.request && parsed.data.request.tool_use_id === toolUseId) {
        return parsed.data.request_id;
      }
    }
    return undefined;
  };
  return waitFor(requestId, { message: `the control_request for tool_use ${toolUseId}`, timeoutMs: 10_000 });
}

export type ReviewStep =
  | { on: 'plan_ready'; decide: (plan: string) => PermissionDecision; /** Awaited before deciding. */ after?: () => Promise<unknown> }
  | { on: 'needs_input'; reply: string };

/**
 * Answers phases in order, like a person at the review panel: each step waits for its phase.
 * `onPhase` is synchronous in the poller, so the answers run in a chain; `failures` collects errors.
 */
export function scriptedReviewer(client: SessionsClient, sessionId: string, steps: ReviewStep[]) {
  const queue = [...steps];
  const phases: PollPhase[] = [];
  const failures: unknown[] = [];
  let chain: Promise<void> = Promise.resolve();
  const onPhase = (phase: PollPhase, detail: PollPhaseDetail): void => {
    phases.push(phase);
    const next = queue[0];
    if (!next || next.on !== phase) return;
    queue.shift();
    chain = chain
      .then(async () => {
        if (next.on === 'needs_input') {
          await client.sendEvents(sessionId, [userMessageEvent(next.reply)]);
          return;
        }
        const pending = detail.pendingPlan;
        if (!pending) throw new Error('plan_ready without a pending plan');
        await next.after?.();
        const requestId = pending.requestId ?? (await requestIdFor(client, sessionId, pending.toolUseId));
        await client.sendEvents(sessionId, [controlResponseEvent(requestId, next.decide(pending.plan ?? ''))]);
      })
      .catch((err: unknown) => void failures.push(err));
  };
  return { onPhase, phases, failures, remaining: queue, settled: () => chain };
}
