// Small shared pieces for the session host tests: requests, waiting on a host, reading a log.
import * as path from 'node:path';
import {
  EXIT_PLAN_MODE_TOOL,
  contentText,
  setPlanModeEvent,
  userMessageEvent,
  type CreateSessionRequest,
  type SessionStatus,
} from '../../src/core/protocol';
import type { SessionHost, StoredEvent } from '../../src/service/host/sessionHost';
import { loadScenarioFile } from '../../src/agents/catalogue/scenario';
import { scriptedAgentFactory } from '../../src/agents/scripted/scriptedAgent';
import type { AgentFactory } from '../../src/agents/agent';
import { pollForApprovedPlan, type ApprovedPlan, type PollPhase, type PollRead } from '../../src/core/poller';
import { controlResponseEvent, type PermissionDecision } from '../../src/core/protocol';
import type { InProcessBackend } from '../../src/service/inProcessBackend';
import { watchPhases, type PollPhaseDetail } from '../support/pollPhases';

export const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');
export const example = (name: string) => path.join(EXAMPLES, name);

export function createRequest(prompt = 'Plan the change', title = 'ultraplan: test'): CreateSessionRequest {
  return {
    title,
    events: [
      { type: 'event', data: setPlanModeEvent(`set-mode-${Math.random().toString(16).slice(2)}`) },
      { type: 'event', data: userMessageEvent(prompt) },
    ],
    session_context: { sources: [], outcomes: [], model: 'scripted' },
  };
}

export async function scenarioFactory(name: string): Promise<AgentFactory> {
  return scriptedAgentFactory(await loadScenarioFile(example(name)));
}

/** Resolves when the session reaches `status` (checked on every notice); rejects after timeoutMs. */
export function waitForStatus(host: SessionHost, id: string, status: SessionStatus, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (host.getSession(id).session_status === status) return resolve();
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`session ${id} did not reach ${status} within ${timeoutMs} ms (it is ${host.getSession(id).session_status})`));
    }, timeoutMs);
    const unsubscribe = host.subscribe(id, (notice) => {
      if (notice.status === status) {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      }
    });
  });
}

export function allEvents(host: SessionHost, id: string): StoredEvent[] {
  const out: StoredEvent[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const page = host.readEvents(id, cursor, 1000);
    out.push(...page.data);
    cursor = page.last_id ?? cursor;
    if (!page.has_more) break;
  }
  return out;
}

/** The newest can_use_tool control_request for ExitPlanMode: its request id and plan. */
export function pendingPlanRequest(events: readonly StoredEvent[]): { requestId: string; toolUseId: string; plan: string } {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as StoredEvent & {
      request?: { subtype?: string; tool_name?: string; tool_use_id?: string; input?: { plan?: string } };
    };
    if (e.type === 'control_request' && e.request?.subtype === 'can_use_tool' && e.request.tool_name === EXIT_PLAN_MODE_TOOL) {
      return { requestId: e.request_id as string, toolUseId: e.request.tool_use_id as string, plan: e.request.input?.plan as string };
    }
  }
  throw new Error('no ExitPlanMode control_request in the log');
}

/** The tool_result blocks in the log for `toolUseId`. */
export function toolResults(events: readonly StoredEvent[], toolUseId: string): Array<{ text: string; isError: boolean }> {
  const out: Array<{ text: string; isError: boolean }> = [];
  for (const e of events) {
    if (e.type !== 'user') continue;
    const content = (e.message as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const block of content as Array<{ type?: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>) {
      if (block.type === 'tool_result' && block.tool_use_id === toolUseId)
        out.push({ text: contentText(block.content), isError: block.is_error === true });
    }
  }
  return out;
}

export function assistantTexts(events: readonly StoredEvent[]): string[] {
  return events.flatMap((e) =>
    e.type === 'assistant'
      ? (e.message as { content: Array<{ type: string; text?: string }> }).content
          .filter((b) => b.type === 'text')
          .map((b) => b.text as string)
      : [],
  );
}

export function types(events: readonly StoredEvent[]): string[] {
  return events.map((e) => (e.type === 'result' ? `result:${String(e.subtype)}` : e.type));
}

/**
 * Follows a session with the poller and answers the first plan it shows with `decide(plan)`
 * (approve as shown: `approveAsShown`); `onPhase` sees every phase first. Resolves as the poll does.
 */
export function decideFirstPlan(
  backend: InProcessBackend,
  sessionId: string,
  poll: { pollIntervalMs: number; timeoutMs: number },
  decide: (plan: string) => PermissionDecision,
  onPhase?: (phase: PollPhase, detail: PollPhaseDetail) => void,
  also?: (poll: PollRead) => void,
): Promise<ApprovedPlan> {
  let decided = false;
  return pollForApprovedPlan({
    sessionId,
    transport: backend.transport,
    ...poll,
    ...watchPhases(
      (phase, detail) => {
        onPhase?.(phase, detail);
        if (phase === 'plan_ready' && detail.pendingPlan?.requestId && !decided) {
          decided = true;
          void backend.sendEvents(sessionId, [controlResponseEvent(detail.pendingPlan.requestId, decide(detail.pendingPlan.plan ?? ''))]);
        }
      },
      also ? { also } : {},
    ),
  });
}

/** The reviewer approves the plan as the agent wrote it. */
export const approveAsShown = (plan: string): PermissionDecision => ({ behavior: 'allow', updatedInput: { plan } });

/**
 * Follows a session with the poller: replies `reply` to the agent's first question (if it asks
 * one), approves the first plan as shown. Answers the question seen and the approved plan.
 */
export async function replyThenApprove(
  backend: InProcessBackend,
  sessionId: string,
  reply: string,
  poll: { pollIntervalMs: number; timeoutMs: number },
): Promise<{ question: string | null; result: ApprovedPlan }> {
  let question: string | null = null;
  const result = await decideFirstPlan(backend, sessionId, poll, approveAsShown, (phase, detail) => {
    if (phase === 'needs_input' && question === null) {
      question = detail.question;
      void backend.sendEvents(sessionId, [userMessageEvent(reply)]);
    }
  });
  return { question, result };
}
