// ExitPlanModeScanner (docs/protocol.md section 4): a pure, stateful classifier fed with batches of
// session events. No I/O, no timers, so recorded or synthetic sessions replay in unit tests.
//
// Memory grows with the number of ExitPlanMode calls, never with the number of events: of all
// tool_results only those answering a known ExitPlanMode call are kept, and only their text.
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  EXIT_PLAN_MODE_TOOL,
  KNOWN_EVENT_TYPES,
  KnownEventSchema,
  ToolResultBlockSchema,
  ToolUseBlockSchema,
  ULTRAPLAN_TELEPORT_SENTINEL,
  contentText,
  type KnownEvent,
} from './protocol';
import { UltraplanPollError } from './errors';
import { parseEventBatch, type ParsedBatch } from './eventBatch';

export type ScanVerdict =
  | { kind: 'approved'; plan: string }
  | { kind: 'teleport'; plan: string }
  | { kind: 'rejected'; id: string }
  | { kind: 'pending' }
  | { kind: 'terminated'; subtype: string }
  | { kind: 'unchanged' };

/** The plan waiting for a decision. `requestId` answers its can_use_tool control_request. */
export interface PendingPlan {
  toolUseId: string;
  /** The plan markdown; null while neither the tool_use nor the control_request carried one. */
  plan: string | null;
  requestId?: string;
}

export type PlanRevisionOutcome =
  | { kind: 'pending' }
  | { kind: 'rejected'; feedback: string }
  /** `plan` is what was approved (the reviewer's edit when `edited`); null when the marker is missing. */
  | { kind: 'approved'; plan: string | null; edited: boolean }
  | { kind: 'teleport'; plan: string };

/**
 * One ExitPlanMode call, in call order: what the agent proposed and what became of it, as the log
 * tells it. The panel's row of it is panelMessages' PlanRevision (sessionProjection.ts makes it).
 */
export interface ScannedRevision {
  toolUseId: string;
  plan: string | null;
  requestId?: string;
  outcome: PlanRevisionOutcome;
}

/** The `result` event that ended the turn in which the plan was approved or teleported. */
export interface SessionResult {
  subtype: string;
  isError: boolean;
  result?: string;
}

interface StoredResult {
  isError: boolean;
  text: string;
  /** Event ordinal, to tell a later `result` event (the execution's outcome) from earlier ones. */
  ordinal: number;
}

type ToolResultFields = { tool_use_id: string; content?: unknown; is_error?: boolean };

const KNOWN_TYPES: ReadonlySet<string> = new Set(KNOWN_EVENT_TYPES);

interface ProposedPlan {
  plan: string | null;
  requestId?: string;
}

/** Reads `input.plan` if the input is an object holding a string plan. */
function planOf(input: unknown): string | null {
  if (input !== null && typeof input === 'object') {
    const plan = (input as { plan?: unknown }).plan;
    if (typeof plan === 'string') return plan;
  }
  return null;
}

/** The approved plan inside a non-error tool_result, or null when neither marker is there. */
export function extractApprovedPlan(text: string): { plan: string; edited: boolean } | null {
  // The edited marker first: it is the longer one and says the reviewer changed the plan.
  let at = text.indexOf(APPROVED_PLAN_EDITED_MARKER);
  if (at !== -1) return { plan: text.slice(at + APPROVED_PLAN_EDITED_MARKER.length).trimEnd(), edited: true };
  at = text.indexOf(APPROVED_PLAN_MARKER);
  if (at !== -1) return { plan: text.slice(at + APPROVED_PLAN_MARKER.length).trimEnd(), edited: false };
  return null;
}

/** The teleported plan inside an error tool_result, or null when it carries no sentinel. */
export function extractTeleportPlan(text: string): string | null {
  const marker = `${ULTRAPLAN_TELEPORT_SENTINEL}\n`;
  const at = text.indexOf(marker);
  return at === -1 ? null : text.slice(at + marker.length).trimEnd();
}

/**
 * Validates one raw event: the event, 'unknown' for a type this scanner does not read (the
 * wire's business, not an error), or 'malformed' (missing fields, wrong types).
 */
export function readSessionEvent(raw: unknown): KnownEvent | 'unknown' | 'malformed' {
  if (raw === null || typeof raw !== 'object') return 'malformed';
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string') return 'malformed';
  if (!KNOWN_TYPES.has(type)) return 'unknown';
  const parsed = KnownEventSchema.safeParse(raw);
  if (!parsed.success) return 'malformed';
  const event = parsed.data;
  // The block union admits any `{type}` object, so a tool_use without an id would slip through
  // as an "other" block and an ExitPlanMode call would be silently missed. Check the two block
  // kinds the scanner reads against their own schemas.
  if (event.type === 'assistant' || event.type === 'user') {
    const content = event.message.content;
    if (typeof content !== 'string') {
      for (const block of content) {
        if (block.type === 'tool_use' && !ToolUseBlockSchema.safeParse(block).success) return 'malformed';
        if (block.type === 'tool_result' && !ToolResultBlockSchema.safeParse(block).success) return 'malformed';
      }
    }
  }
  return event;
}

export class ExitPlanModeScanner {
  /** ExitPlanMode tool_use ids in call order. */
  private readonly calls: string[] = [];
  private readonly callSet = new Set<string>();
  /** tool_results of ExitPlanMode calls only (see ingest for why nothing else is kept). */
  private readonly results = new Map<string, StoredResult>();
  /** Proposed plans by tool_use id, from the tool_use input or the can_use_tool request. */
  private readonly proposed = new Map<string, ProposedPlan>();
  private readonly rejected = new Set<string>();
  private terminatedSubtype: string | null = null;
  private terminatedDetailText: string | null = null;
  private rescanAfterRejection = false;
  private seenPending = false;
  private ordinal = 0;
  private decision: { kind: 'approved' | 'teleport'; plan: string; toolUseId: string } | null = null;
  private execution: SessionResult | null = null;
  /** Every `result` read, the latest of them, and where the latest result and person's message are. */
  private resultsRead = 0;
  private latest: SessionResult | null = null;
  private latestResultAt = 0;
  private latestMessageAt = 0;
  private assistantText: string | null = null;
  private malformed = 0;
  /** This batch's tool_results of ids not known as ExitPlanMode calls (see ingest). */
  private unmatched: Array<{ block: ToolResultFields; ordinal: number }> | null = null;

  /**
   * Number of plans rejected so far. Ours: every call answered by a rejection counts, also one
   * superseded by the next call in the same batch, which the scan never targets (the reference
   * counts only scanned rejections, so a session replayed from the start on resume would show 0).
   */
  get rejectCount(): number {
    let count = 0;
    for (const id of this.calls) {
      const result = this.results.get(id);
      if (result !== undefined && result.isError && extractTeleportPlan(result.text) === null) count++;
    }
    return count;
  }

  /** The newest call not yet rejected has no tool_result yet. */
  get hasPendingPlan(): boolean {
    return this.pendingPlan !== null;
  }

  /** Whether `pending` was ever returned (for timeout_pending vs timeout_no_plan). */
  get everSeenPending(): boolean {
    return this.seenPending;
  }

  /** The plan awaiting review, if the newest non-rejected ExitPlanMode call has no result. */
  get pendingPlan(): PendingPlan | null {
    const id = this.newestNotRejected();
    if (id === undefined || this.results.has(id)) return null;
    const proposed = this.proposed.get(id);
    const pending: PendingPlan = { toolUseId: id, plan: proposed?.plan ?? null };
    if (proposed?.requestId !== undefined) pending.requestId = proposed.requestId;
    return pending;
  }

  /** The text of the agent's last top-level assistant message: its question, when it asks one. */
  get lastAssistantText(): string | null {
    return this.assistantText;
  }

  /** Events skipped because they failed schema validation. */
  get malformedCount(): number {
    return this.malformed;
  }

  /** Subtype of the non-success `result` that ended the session, if one arrived. */
  get terminated(): string | null {
    return this.terminatedSubtype;
  }

  /**
   * What the terminating `result` said (its `errors`, else its `result` text), clipped: the agent's
   * own explanation (an ACP agent's stderr tail, a refused login) is what a person needs to see.
   */
  get terminatedDetail(): string | null {
    return this.terminatedDetailText;
  }

  /** The approval or teleport this scanner has returned, if any (survives later batches). */
  get decided(): { kind: 'approved' | 'teleport'; plan: string; toolUseId: string } | null {
    return this.decision;
  }

  /**
   * The first `result` event after the approved (or teleported) tool_result: how the remote's
   * execution of the plan ended. Null until it arrives.
   */
  get executionResult(): SessionResult | null {
    return this.execution;
  }

  /** How many `result` events were read: one per agent turn that ended. */
  get resultCount(): number {
    return this.resultsRead;
  }

  /** The latest `result` event read (the last turn's end), if any. */
  get latestResult(): SessionResult | null {
    return this.latest;
  }

  /**
   * After the execution's result, a person's message (Continue, Fix, a reply from any window)
   * started a turn whose `result` has not been read yet.
   */
  get turnOpen(): boolean {
    return this.execution !== null && this.latestMessageAt > this.latestResultAt;
  }

  /** How many tool_results are held. Exposed so tests and benchmarks can check the memory bound. */
  get storedResultCount(): number {
    return this.results.size;
  }

  /** Every ExitPlanMode call seen, oldest first, with what became of it. */
  get revisions(): ScannedRevision[] {
    return this.calls.map((toolUseId) => {
      const proposed = this.proposed.get(toolUseId);
      const revision: ScannedRevision = {
        toolUseId,
        plan: proposed?.plan ?? null,
        outcome: this.outcomeOf(toolUseId),
      };
      if (proposed?.requestId !== undefined) revision.requestId = proposed.requestId;
      return revision;
    });
  }

  /**
   * Feeds one batch of raw events (as read from the wire) and returns one verdict.
   * Throws UltraplanPollError('extract_marker_missing') when an approval carries no marker.
   */
  ingest(batch: readonly unknown[]): ScanVerdict {
    return this.ingestParsed(parseEventBatch(batch));
  }

  /** Feeds one batch already validated at the transport (see parseEventBatch); one verdict. */
  ingestParsed(batch: ParsedBatch): ScanVerdict {
    this.malformed += batch.malformed;
    // Results for ids not (yet) known as ExitPlanMode calls, held only for this batch: within a
    // batch a tool_result may precede its tool_use (events of one page are not re-sorted by every
    // server). Across batches we do not hold them: the event stream is ordered, a tool_use is
    // always stored before its result, and holding unknown results would make memory grow with
    // every tool call of the session - the very thing this scanner exists to avoid.
    const resultEvents: Array<{ ordinal: number; result: SessionResult }> = [];

    for (const event of batch.events) {
      const ordinal = ++this.ordinal;
      switch (event.type) {
        case 'assistant': {
          const texts: string[] = [];
          for (const block of event.message.content) {
            if (block.type === 'tool_use') {
              const use = block as { id: string; name: string; input: unknown };
              if (use.name === EXIT_PLAN_MODE_TOOL) this.recordCall(use.id, planOf(use.input));
            } else if (block.type === 'text') {
              texts.push((block as { text: string }).text);
            }
          }
          // Subagent messages (parent_tool_use_id set) are not the agent talking to the user.
          const text = texts.join('\n').trim();
          if (text !== '' && (event.parent_tool_use_id ?? null) === null) this.assistantText = text;
          break;
        }
        case 'user': {
          const content = event.message.content;
          // A person's message (not a tool's result) starts a new agent turn.
          if (
            (event.parent_tool_use_id ?? null) === null &&
            (typeof content === 'string' || (content.length > 0 && content.every((b) => b.type === 'text')))
          ) {
            this.latestMessageAt = ordinal;
          }
          if (typeof content === 'string') break;
          for (const block of content) {
            if (block.type !== 'tool_result') continue;
            const tr = block as ToolResultFields;
            // Cheap test first: most tool_results are not ExitPlanMode's, and only the kept ones
            // have their text read (joining blocks copies strings).
            if (!this.callSet.has(tr.tool_use_id) && !this.proposed.has(tr.tool_use_id)) {
              (this.unmatched ??= []).push({ block: tr, ordinal });
              continue;
            }
            if (!this.recordResult(tr.tool_use_id, tr, ordinal)) this.malformed++;
          }
          break;
        }
        case 'result': {
          if (event.subtype !== 'success') {
            this.terminatedSubtype = event.subtype;
            this.terminatedDetailText = resultDetail(event.errors, event.result);
          }
          const result: SessionResult = { subtype: event.subtype, isError: event.is_error ?? event.subtype !== 'success' };
          if (event.result !== undefined) result.result = event.result;
          resultEvents.push({ ordinal, result });
          this.resultsRead++;
          this.latest = result;
          this.latestResultAt = ordinal;
          break;
        }
        case 'control_request': {
          const request = event.request as { subtype: string; tool_name?: unknown; tool_use_id?: unknown; input?: unknown };
          if (request.subtype === 'can_use_tool' && request.tool_name === EXIT_PLAN_MODE_TOOL && typeof request.tool_use_id === 'string') {
            // Bounded by ExitPlanMode calls, so kept even before its tool_use is seen.
            const entry = this.proposed.get(request.tool_use_id) ?? { plan: null };
            // The request is what the reviewer's decision answers, so its plan wins.
            entry.plan = planOf(request.input) ?? entry.plan;
            entry.requestId = event.request_id;
            this.proposed.set(request.tool_use_id, entry);
          }
          break;
        }
        default:
          break;
      }
    }

    const unmatched = this.unmatched;
    this.unmatched = null;
    if (unmatched !== null) {
      for (const { block, ordinal } of unmatched) {
        if (this.callSet.has(block.tool_use_id) && !this.recordResult(block.tool_use_id, block, ordinal)) this.malformed++;
      }
    }

    const verdict = this.scan(batch.size > 0);
    this.noteExecutionResult(resultEvents);
    return verdict;
  }

  private recordCall(id: string, plan: string | null): void {
    if (this.callSet.has(id)) return;
    this.calls.push(id);
    this.callSet.add(id);
    const entry = this.proposed.get(id);
    if (entry === undefined) this.proposed.set(id, { plan });
    else if (entry.plan === null) entry.plan = plan;
  }

  /** Keeps an ExitPlanMode call's result; false (nothing kept) when what it says cannot be read. */
  private recordResult(id: string, block: ToolResultFields, ordinal: number): boolean {
    // The transport checked the routing (the id); the part kept is checked here, where it is kept.
    const content = block.content;
    const readable =
      content === undefined ||
      typeof content === 'string' ||
      (Array.isArray(content) && content.every((b) => b !== null && typeof b === 'object'));
    if (!readable || (block.is_error !== undefined && typeof block.is_error !== 'boolean')) return false;
    this.results.set(id, { isError: block.is_error === true, text: contentText(content), ordinal });
    return true;
  }

  private newestNotRejected(): string | undefined {
    for (let i = this.calls.length - 1; i >= 0; i--) {
      const id = this.calls[i]!;
      if (!this.rejected.has(id)) return id;
    }
    return undefined;
  }

  private scan(nonEmpty: boolean): ScanVerdict {
    // A rejection moves the target to an older call, so the next ingest scans even when empty.
    const shouldScan = nonEmpty || this.rescanAfterRejection;
    this.rescanAfterRejection = false;

    let found: ScanVerdict | null = null;
    if (shouldScan) {
      const id = this.newestNotRejected();
      if (id !== undefined) {
        const result = this.results.get(id);
        if (result === undefined) {
          found = { kind: 'pending' };
        } else if (result.isError) {
          const plan = extractTeleportPlan(result.text);
          found = plan !== null ? { kind: 'teleport', plan } : { kind: 'rejected', id };
        } else {
          const approved = extractApprovedPlan(result.text);
          if (approved === null) {
            throw new UltraplanPollError(
              'extract_marker_missing',
              'The plan was approved, but the result did not contain the "## Approved Plan:" marker, so the ' +
                'approved plan text could not be read. The agent or service may have changed its format; open the session to see it.',
              this.rejectCount,
            );
          }
          found = { kind: 'approved', plan: approved.plan };
        }
        // Approval and teleport win over everything else in the batch, even a later crash.
        if (found.kind === 'approved' || found.kind === 'teleport') {
          this.decision = { kind: found.kind, plan: found.plan, toolUseId: id };
          return found;
        }
      }
    }

    // Counted even when a termination takes precedence below.
    if (found?.kind === 'rejected') {
      this.rejected.add(found.id);
      this.rescanAfterRejection = true;
    }
    if (this.terminatedSubtype !== null) return { kind: 'terminated', subtype: this.terminatedSubtype };
    if (found?.kind === 'rejected') return found;
    if (found?.kind === 'pending') {
      this.seenPending = true;
      return found;
    }
    return { kind: 'unchanged' };
  }

  private noteExecutionResult(resultEvents: Array<{ ordinal: number; result: SessionResult }>): void {
    if (this.decision === null || this.execution !== null) return;
    const decidedAt = this.results.get(this.decision.toolUseId)?.ordinal ?? 0;
    const after = resultEvents.find((r) => r.ordinal > decidedAt);
    if (after !== undefined) this.execution = after.result;
  }

  private outcomeOf(toolUseId: string): PlanRevisionOutcome {
    const result = this.results.get(toolUseId);
    if (result === undefined) return { kind: 'pending' };
    if (result.isError) {
      const plan = extractTeleportPlan(result.text);
      return plan !== null ? { kind: 'teleport', plan } : { kind: 'rejected', feedback: result.text };
    }
    const approved = extractApprovedPlan(result.text);
    return { kind: 'approved', plan: approved?.plan ?? null, edited: approved?.edited ?? false };
  }
}

const MAX_TERMINATION_DETAIL_CHARS = 2000;

function resultDetail(errors: readonly string[] | undefined, result: string | undefined): string | null {
  const text = (errors && errors.length > 0 ? errors.join('\n') : (result ?? '')).trim();
  if (text === '') return null;
  return text.length > MAX_TERMINATION_DETAIL_CHARS ? `${text.slice(0, MAX_TERMINATION_DETAIL_CHARS)}…` : text;
}
