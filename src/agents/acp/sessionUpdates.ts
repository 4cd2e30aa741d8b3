// Where each `session/update` of a live session goes: the first-event bound hears that the model
// is at work, the agent's quirks read their own signals (a status, a mode, a notice), the planning
// guard hears modes, tool calls reach the plan texts and the decisions, and the rest is translated
// into the session's events. Each part is handed in; none is reached through the others.
import type { SessionNotification, ToolCallUpdate } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { AgentQuirks } from '../quirks/agentQuirks';
import type { AcpEventTranslator } from './eventTranslator';
import { modeFromUpdate, sessionModeFromUpdate } from './planMode';
import type { PlanningGuard } from './planningGuard';
import type { PlanTexts } from './planText';
import type { ReviewDecisions } from './reviewDecisions';
import type { TurnQueue } from './turnQueue';

/** Updates that show a turn is progressing (for the first-event bound). */
const PROGRESS_UPDATES: ReadonlySet<string> = new Set([
  'agent_message_chunk',
  'agent_thought_chunk',
  'tool_call',
  'tool_call_update',
  'plan',
]);

export interface SessionUpdatesHost {
  readonly turns: Pick<TurnQueue, 'active' | 'sawEvent' | 'sawStatus'>;
  readonly guard: Pick<PlanningGuard, 'approved' | 'modeReported' | 'planTarget' | 'sessionMode'>;
  readonly translator: Pick<AcpEventTranslator, 'update'>;
  readonly planTexts: Pick<PlanTexts, 'toolCallSeen'>;
  readonly decisions: Pick<ReviewDecisions, 'toolCallSeen'>;
  readonly quirks: AgentQuirks;
  /** The adapter's own notice: in the log, never taken for the model's question or plan. */
  notice(text: string): void;
  log(line: string): void;
}

export function routeSessionUpdate(update: SessionNotification['update'], parts: SessionUpdatesHost): void {
  const { turns, guard } = parts;
  // Only signs of the model at work count: adapters send command lists, usage and status
  // ("Reconnecting…") on their own.
  if (turns.active && PROGRESS_UPDATES.has(update.sessionUpdate)) turns.sawEvent();
  const raw = update as unknown as { sessionUpdate: string } & Record<string, unknown>;
  const own = parts.quirks.readUpdate(raw);
  if (own?.kind === 'status') {
    turns.sawStatus(own.text);
    parts.log(`status: ${own.text}`);
  }
  const sessionMode = sessionModeFromUpdate(raw);
  if (sessionMode !== undefined) guard.sessionMode = sessionMode;
  if (own?.kind === 'mode') {
    // A mode signal, not something the agent said.
    guard.modeReported(own.mode);
    return;
  }
  if (own?.kind === 'notice') {
    parts.notice(own.text);
    return;
  }
  if (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') toolCallSeen(update, parts);
  const mode = modeFromUpdate(raw, guard.planTarget);
  if (mode !== undefined) {
    guard.modeReported(mode);
    return;
  }
  parts.translator.update(update);
}

function toolCallSeen(call: ToolCallUpdate, parts: SessionUpdatesHost): void {
  if (!parts.guard.approved) parts.planTexts.toolCallSeen(call);
  parts.decisions.toolCallSeen(call);
}
