// Where the plan text of an exit request comes from: the request's own input, the tool call's
// update that carries it (which may come just after the request), a file it names (read under the
// read-only policy), an edit that wrote that file while planning, or the agent's last words.
import * as path from 'node:path';
import type { ToolCallUpdate } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { AgentFileAccess } from './agentFileAccess';
import type { AgentQuirks } from '../quirks/agentQuirks';
import type { AcpEventTranslator } from './eventTranslator';
import { namedPlanFile, planSource, rawInputPlan, toolCallText, type PlanReviewForm } from './planReview';

/** Files the agent proposed while planning (edit diffs), remembered for its exit request. */
const MAX_PROPOSED_FILES = 100;
/**
 * How long an exit request without a plan waits for the tool call's update that carries it. Only
 * the time this process ran counts (each pause at most ANNOUNCED_INPUT_PAUSE_COUNTED_MS): on a
 * loaded machine a stall of this process, or of the agent, must not turn a plan into "no plan".
 */
const ANNOUNCED_INPUT_WAIT_MS = 10_000;
const ANNOUNCED_INPUT_POLL_MS = 20;
const ANNOUNCED_INPUT_PAUSE_COUNTED_MS = 100;

export interface PlanTextHost {
  readonly label: string;
  readonly workspace: string;
  readonly files: Pick<AgentFileAccess, 'namedPlan'>;
  readonly translator: Pick<AcpEventTranslator, 'lastAssistantText' | 'latestPlanToolCall' | 'toolCall'>;
  readonly quirks: AgentQuirks;
  /** Neither ended nor stopping. */
  readonly live: boolean;
  /** Default ANNOUNCED_INPUT_WAIT_MS. */
  readonly announcedInputWaitMs?: number;
  log(line: string): void;
}

export class PlanTexts {
  readonly #host: PlanTextHost;
  /** The whole new text of files the agent's edit tool calls announced while planning (by path). */
  readonly #proposedFiles = new Map<string, string>();
  /** The newest Markdown file in a `plans` folder that an edit tool call named while planning. */
  #planFileEdited: string | undefined;

  constructor(host: PlanTextHost) {
    this.#host = host;
  }

  /** While planning: remembers the whole new text of each file an edit tool call completed (Gemini announces its plan file only so). */
  toolCallSeen(call: ToolCallUpdate): void {
    const planFile = editedPlanFile(call, call.kind ?? this.#host.translator.toolCall(call.toolCallId)?.kind);
    if (planFile) this.#planFileEdited = path.resolve(this.#host.workspace, planFile);
    if (call.status !== 'completed') return;
    for (const item of call.content ?? []) {
      if (item.type !== 'diff') continue;
      const file = path.resolve(this.#host.workspace, item.path);
      this.#proposedFiles.delete(file);
      this.#proposedFiles.set(file, item.newText);
      const oldest = this.#proposedFiles.size > MAX_PROPOSED_FILES ? this.#proposedFiles.keys().next().value : undefined;
      if (oldest !== undefined) this.#proposedFiles.delete(oldest);
    }
  }

  /** The plan of an exit request: rawInput.plan, else its text, else the plan file it names. */
  async ofExitRequest(toolCall: ToolCallUpdate): Promise<string> {
    const own = this.#host.quirks.ownPlanExit(toolCall);
    if (own) return this.#ownPlan(own.planFile, toolCall.toolCallId);
    // An empty rawInput (Claude's adapter, when the model passed the plan inline) falls back to
    // what the same tool call announced in its update, which may come just after the request.
    const ownInput =
      toolCall.rawInput && typeof toolCall.rawInput === 'object' && Object.keys(toolCall.rawInput).length ? toolCall.rawInput : undefined;
    const textOrFile = toolCallText(toolCall).trim() !== '' || (toolCall.locations?.length ?? 0) > 0;
    const remembered =
      ownInput !== undefined
        ? undefined
        : textOrFile
          ? this.#host.translator.toolCall(toolCall.toolCallId)?.rawInput
          : await this.#announcedInput(toolCall.toolCallId);
    const source = planSource({
      rawInput: ownInput ?? remembered,
      content: toolCall.content,
      locations: toolCall.locations,
    });
    if (source.kind === 'text') return source.text;
    if (source.kind === 'none') return this.#planFileOrLastWords(toolCall.toolCallId);
    return this.#namedPlanText(path.resolve(this.#host.workspace, source.path));
  }

  /**
   * The plan of an elicitation that asks to approve one: the input of the tool call it names (or of
   * the latest that carried a plan), else its message; and the tool call it stands for.
   */
  ofElicitation(form: PlanReviewForm, message: string): { plan: string; toolCallId: string } {
    const translator = this.#host.translator;
    const remembered = form.toolCallId ? translator.toolCall(form.toolCallId) : undefined;
    const carrier = remembered && rawInputPlan({ rawInput: remembered.rawInput }) ? remembered : translator.latestPlanToolCall();
    const plan = (carrier && rawInputPlan({ rawInput: carrier.rawInput })) || message;
    return { plan, toolCallId: form.toolCallId ?? carrier?.toolCallId ?? 'elicitation' };
  }

  /**
   * The rawInput a tool call announced in its updates. Claude's adapter asks its permission from
   * one path and streams the tool call's input from another, so the update carrying the plan may
   * arrive just after the request: waited for, briefly, when the request came without one and the
   * agent wrote no plan file while planning. When it wrote one, that file is the plan at once (Claude
   * Code fills its request from it, and leaves the request empty when its own cache of the file lags).
   */
  async #announcedInput(toolCallId: string): Promise<unknown> {
    let waited = 0;
    for (;;) {
      const input = this.#host.translator.toolCall(toolCallId)?.rawInput;
      if (
        rawInputPlan({ rawInput: input }) ||
        namedPlanFile({ rawInput: input }) ||
        this.#planFileEdited !== undefined ||
        waited >= (this.#host.announcedInputWaitMs ?? ANNOUNCED_INPUT_WAIT_MS) ||
        !this.#host.live
      )
        return input;
      const paused = Date.now();
      await new Promise((resolve) => setTimeout(resolve, ANNOUNCED_INPUT_POLL_MS));
      // A long pause is this process (or the machine) stalled, with the update perhaps read meanwhile: not time spent waiting.
      waited += Math.min(Date.now() - paused, ANNOUNCED_INPUT_PAUSE_COUNTED_MS);
    }
  }

  /**
   * No plan in the request, nor in its update: the plan file the agent wrote while planning, which
   * is where Claude Code itself takes the plan from (its adapter's request does not always carry it
   * yet); else its last words.
   */
  async #planFileOrLastWords(toolCallId: string): Promise<string> {
    const planFile = this.#planFileEdited;
    if (planFile === undefined) return this.#withoutSource(toolCallId);
    this.#host.log(`the exit-plan request ${toolCallId} carries no plan: taking the plan file ${planFile} the agent wrote while planning`);
    return this.#namedPlanText(planFile);
  }

  /** No plan in the request: the agent's last words are the plan it proposed, if it said any. */
  #withoutSource(toolCallId: string): string {
    this.#host.log(`the exit-plan request ${toolCallId} carries no plan`);
    const said = this.#host.translator.lastAssistantText.trim();
    return said || `(${this.#host.label} asked to leave plan mode without a plan text.)`;
  }

  /** An exit request of the agent's own shape: the edit that wrote the file it names, else exactly that file (under the read policy). */
  async #ownPlan(planFile: string | undefined, toolCallId: string): Promise<string> {
    if (!planFile) return this.#withoutSource(toolCallId);
    const file = path.resolve(this.#host.workspace, planFile);
    const proposed = this.#proposedFiles.get(file);
    if (proposed !== undefined) return proposed;
    return this.#namedPlanText(file);
  }

  /** The plan file an exit request names, read under the policy, or why not. */
  async #namedPlanText(resolved: string): Promise<string> {
    const named = await this.#host.files.namedPlan(resolved);
    if (named.ok) return named.value;
    this.#host.log(`did not read the named plan file ${resolved}: ${named.message}`);
    return `(${this.#host.label} named its plan file ${resolved}, but Ultraplan did not read it: ${named.message}.)`;
  }
}

/** The plan file an edit tool call names: a Markdown file in a folder named `plans` (Claude's ~/.claude/plans, Copilot's, OpenCode's). */
function editedPlanFile(call: ToolCallUpdate, kind: string | null | undefined): string | undefined {
  if (kind !== 'edit') return undefined;
  const input = call.rawInput && typeof call.rawInput === 'object' ? (call.rawInput as Record<string, unknown>) : {};
  const named = [input.file_path, input.path, ...(call.locations ?? []).map((location) => location.path)];
  return named.find(
    (file): file is string => typeof file === 'string' && file.endsWith('.md') && path.basename(path.dirname(file)) === 'plans',
  );
}
