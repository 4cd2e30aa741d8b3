// Where a batch of session events is validated: once, as it leaves the transport (the poller
// calls parseEventBatch on every read). Everything downstream (the scanner, the permission
// tracker, the session model) reads the parsed batch and validates nothing again.
//
// The check is as deep as what anyone reads: routing fields (type, message, content, block types,
// ids) by hand, and with their zod schema the parts that decide something (`result` and
// `control_request` events, ExitPlanMode calls). Most events of a long session are other tools'
// calls and results that nothing reads beyond their ids; checking each with zod would cost more
// than the scan. An event with a malformed part is skipped whole and counted.
import {
  AGENT_LOST_SUBTYPE,
  AGENT_RESTARTED_SUBTYPE,
  AGENT_RESUMED_SUBTYPE,
  AGENT_MODE_SUBTYPE,
  AgentModeEventSchema,
  ControlRequestEventSchema,
  ModeCarryingSystemEventSchema,
  EXIT_PLAN_MODE_TOOL,
  ResultEventSchema,
  ToolUseBlockSchema,
  type AssistantEvent,
  type ControlRequestEvent,
  type KnownEvent,
  type ResultEvent,
  type UserEvent,
} from './protocol';
import { PROGRESS_SUBTYPE, ProgressEventSchema, type ProgressEvent } from './execution/progress';
import { PLAN_APPROVAL_SUBTYPE, approvalOf, type ApprovalState } from './planApprovals';

/** One batch as read from the transport, each event validated once. */
export interface ParsedBatch {
  readonly events: readonly KnownEvent[];
  /** How many raw items were read (malformed and unknown types included). */
  readonly size: number;
  /** Items that failed validation (skipped, counted). */
  readonly malformed: number;
  /** The last mode the agent reported in this batch, if it reported one. */
  readonly agentMode?: ReportedMode;
  /** Whether the session's agent runs, as the batch's last word on it says (absent: it said nothing). */
  readonly agentLife?: AgentLife;
  /** The execution's progress facts in this batch (`ultraplan_progress` events), in log order. */
  readonly progress?: readonly ProgressEvent[];
  /** Approvals counted toward a quorum (`plan_approval` events, written by the server), in log order. */
  readonly approvals?: readonly ApprovalState[];
  /**
   * The request ids the batch's `control_response` items answer (from any window, the browser or
   * a script), in log order: a prompt for one of them closes at once wherever it is open.
   */
  readonly answered?: readonly string[];
  /**
   * The absolute folder the batch's last `init` system event names as the agent's `cwd` (Claude
   * Code's tools name files by absolute path under it).
   */
  readonly workingFolder?: string;
}

/**
 * The agent stopped (the host restarted and its process is gone: an `agent_lost` event, with the
 * host's words), or an agent runs (anything it emitted, or the host's word that it resumed or
 * restarted). A `result` says neither: the host writes one itself when an agent fails to start.
 */
export type AgentLife = { stopped: true; message: string } | { stopped: false };

const AGENT_RUNS: AgentLife = { stopped: false };

/** What one system event says of the agent's life, if anything. */
function systemLife(raw: Record<string, unknown>): AgentLife | undefined {
  if (raw.subtype === AGENT_LOST_SUBTYPE) {
    return { stopped: true, message: typeof raw.message === 'string' ? raw.message : 'The agent stopped.' };
  }
  if (raw.subtype === AGENT_RESUMED_SUBTYPE || raw.subtype === AGENT_RESTARTED_SUBTYPE || raw.subtype === 'init') return AGENT_RUNS;
  return raw.subtype === AGENT_MODE_SUBTYPE ? AGENT_RUNS : undefined;
}

/** A mode as the session's events report it. */
export interface ReportedMode {
  id: string;
  name?: string;
  /** Our session host says the agent is kept read-only (undefined: nobody said). */
  readOnly?: boolean;
}

/** The mode a system event reports, if it reports one (system events are otherwise skipped). */
function reportedMode(raw: Record<string, unknown>): ReportedMode | 'malformed' | undefined {
  if (raw.subtype === AGENT_MODE_SUBTYPE) {
    const parsed = AgentModeEventSchema.safeParse(raw);
    if (!parsed.success) return 'malformed';
    const mode: ReportedMode = { id: parsed.data.mode.id };
    if (parsed.data.mode.name !== undefined) mode.name = parsed.data.mode.name;
    if (parsed.data.read_only !== undefined) mode.readOnly = parsed.data.read_only;
    return mode;
  }
  if (raw.subtype !== 'init' && raw.subtype !== 'status') return undefined;
  const parsed = ModeCarryingSystemEventSchema.safeParse(raw);
  // A system event in a shape we do not know says nothing about the mode; it is not an error.
  if (!parsed.success) return undefined;
  // Our host's init carries the agent's own mode id; Claude Code's the permission mode.
  const id = parsed.data.agent?.mode ?? parsed.data.permissionMode;
  return id ? { id } : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function readAssistant(event: Record<string, unknown>): AssistantEvent | undefined {
  const message = event.message;
  if (!isRecord(message) || !Array.isArray(message.content)) return undefined;
  const parent = event.parent_tool_use_id;
  if (parent !== undefined && parent !== null && typeof parent !== 'string') return undefined;
  for (const block of message.content as unknown[]) {
    if (!isRecord(block) || typeof block.type !== 'string') return undefined;
    if (block.type === 'text' && typeof block.text !== 'string') return undefined;
    // The call a plan hangs on: an ExitPlanMode block without an id must not pass unnoticed.
    if (block.type === 'tool_use' && block.name === EXIT_PLAN_MODE_TOOL && !ToolUseBlockSchema.safeParse(block).success) return undefined;
  }
  return event as AssistantEvent;
}

function readUser(event: Record<string, unknown>): UserEvent | undefined {
  const message = event.message;
  if (!isRecord(message)) return undefined;
  const content = message.content;
  if (typeof content === 'string') return event as UserEvent;
  if (!Array.isArray(content)) return undefined;
  for (const block of content as unknown[]) {
    if (!isRecord(block) || typeof block.type !== 'string') return undefined;
    // Results are routed by their call's id; their content is checked by whoever keeps it.
    if (block.type === 'tool_result' && typeof block.tool_use_id !== 'string') return undefined;
  }
  return event as UserEvent;
}

/** One raw item: the event, 'skip' for a type nobody here reads, or 'malformed'. */
function readEvent(raw: unknown): KnownEvent | 'skip' | 'malformed' {
  if (!isRecord(raw) || typeof raw.type !== 'string') return 'malformed';
  switch (raw.type) {
    case 'assistant':
      return readAssistant(raw) ?? 'malformed';
    case 'user':
      return readUser(raw) ?? 'malformed';
    case 'result': {
      const parsed = ResultEventSchema.safeParse(raw);
      return parsed.success ? (parsed.data as ResultEvent) : 'malformed';
    }
    case 'control_request': {
      const parsed = ControlRequestEventSchema.safeParse(raw);
      return parsed.success ? (parsed.data as ControlRequestEvent) : 'malformed';
    }
    default:
      // system, stream events, types newer than this client: the wire's business, not an error.
      return 'skip';
  }
}

/** Validates a raw batch once: events kept in order, other types skipped, malformed counted. */
export function parseEventBatch(raw: readonly unknown[]): ParsedBatch {
  const events: KnownEvent[] = [];
  let malformed = 0;
  let agentMode: ReportedMode | undefined;
  let agentLife: AgentLife | undefined;
  let progress: ProgressEvent[] | undefined;
  let answered: string[] | undefined;
  let approvals: ApprovalState[] | undefined;
  let workingFolder: string | undefined;
  for (const item of raw) {
    if (isRecord(item) && item.type === 'system') {
      if (item.subtype === PROGRESS_SUBTYPE) {
        const parsed = ProgressEventSchema.safeParse(item);
        // Only a running agent reports progress.
        if (parsed.success) {
          (progress ??= []).push(parsed.data);
          agentLife = AGENT_RUNS;
        } else malformed++;
        continue;
      }
      if (item.subtype === PLAN_APPROVAL_SUBTYPE) {
        const approval = approvalOf(item);
        if (approval) (approvals ??= []).push(approval);
        else malformed++;
        continue;
      }
      if (item.subtype === 'init' && typeof item.cwd === 'string' && item.cwd.startsWith('/')) workingFolder = item.cwd;
      const mode = reportedMode(item);
      if (mode === 'malformed') malformed++;
      else if (mode) agentMode = mode;
      agentLife = systemLife(item) ?? agentLife;
      continue;
    }
    if (isRecord(item) && item.type === 'control_response') {
      // Only its request id is read; the rest is the service's business (it checked the answer).
      const requestId = isRecord(item.response) ? item.response.request_id : undefined;
      if (typeof requestId === 'string') (answered ??= []).push(requestId);
      continue;
    }
    const read = readEvent(item);
    if (read === 'malformed') malformed++;
    else if (read !== 'skip') {
      events.push(read);
      if (read.type === 'assistant' || read.type === 'control_request') agentLife = AGENT_RUNS;
    }
  }
  const batch: { -readonly [K in keyof ParsedBatch]: ParsedBatch[K] } = { events, size: raw.length, malformed };
  if (agentMode) batch.agentMode = agentMode;
  if (agentLife) batch.agentLife = agentLife;
  if (progress) batch.progress = progress;
  if (answered) batch.answered = answered;
  if (workingFolder) batch.workingFolder = workingFolder;
  if (approvals) batch.approvals = approvals;
  return batch;
}
