// What an ACP agent asks of Ultraplan, answered under the read-only policy until a plan is
// approved: permissions (its plan's exit request opens a review; looking tools are allowed, asked
// or refused by where they look; changes are refused), elicitations (a plan review or a question
// for the person), file reads and writes, and terminals (always refused).
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  ReadTextFileRequest,
  RequestPermissionRequest,
  RequestPermissionResponse,
  ToolCallUpdate,
  WriteTextFileRequest,
} from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { SessionStatus } from '../../core/protocol';
import type { AgentFileAccess } from './agentFileAccess';
import type { AgentQuirks } from '../quirks/agentQuirks';
import type { AcpEventTranslator } from './eventTranslator';
import { CANCELLED, type PendingReviews } from './pendingReviews';
import type { PlanningGuard } from './planningGuard';
import {
  answerQuestion,
  chooseRejectOption,
  chooseToolAllowOption,
  isPlanExitRequest,
  isUnclearRequest,
  planReviewForm,
  questionForm,
  type AfterApproval,
  type QuestionForm,
} from './planReview';
import type { PlanTexts } from './planText';
import { accessDenial, LOOKING_TOOL_KINDS, lookedAtPaths, permissionRefusal, terminalRefusal, type ReadVerdict } from './readOnlyPolicy';
import type { OutsideAccess } from '../../core/agentSettings';
import { isInside } from '../../core/node/realPaths';
import type { TurnQueue } from './turnQueue';

type RequestErrorClass = new (code: number, message: string) => Error;

export interface AgentRequestsHost {
  readonly label: string;
  readonly workspace: string;
  /** The agent's home folder (where it keeps its plans folder). */
  readonly home: string;
  readonly outsideAccess: OutsideAccess;
  readonly afterApproval: AfterApproval;
  readonly files: Pick<AgentFileAccess, 'read' | 'readVerdict' | 'write'>;
  readonly translator: Pick<
    AcpEventTranslator,
    'assistantText' | 'ensureToolUse' | 'exitPlanToolUse' | 'flush' | 'toolCall' | 'toolResult'
  >;
  readonly quirks: AgentQuirks;
  readonly guard: Pick<PlanningGuard, 'approved' | 'changeRefused' | 'otherModeIds'>;
  readonly reviews: Pick<PendingReviews, 'open'>;
  readonly planTexts: Pick<PlanTexts, 'ofElicitation' | 'ofExitRequest'>;
  readonly turns: Pick<TurnQueue, 'sawEvent'>;
  /** Neither ended nor stopping. */
  readonly live: boolean;
  setStatus(status: Exclude<SessionStatus, 'archived'>): void;
  log(line: string): void;
  report(subtype: string, message: string, extra: Record<string, unknown>): void;
}

export class AgentRequests {
  readonly #host: AgentRequestsHost;
  /** A question the agent asked as an elicitation, answered by the next user message. */
  #pendingQuestion: { form: QuestionForm; answer: (response: CreateElicitationResponse) => void } | undefined;

  constructor(host: AgentRequestsHost) {
    this.#host = host;
  }

  /** Answers the agent's open question with the person's `reply`; false when none is open. */
  answerQuestion(reply: string): boolean {
    const question = this.#pendingQuestion;
    if (!question) return false;
    this.#pendingQuestion = undefined;
    question.answer({ action: 'accept', content: answerQuestion(question.form, reply) });
    return true;
  }

  /** The agent no longer waits for an answer to its question. */
  cancelQuestion(): void {
    this.#pendingQuestion?.answer({ action: 'cancel' });
    this.#pendingQuestion = undefined;
  }

  /** terminal/*: no terminal is ever given to the agent. */
  terminal(method: string, RequestError: RequestErrorClass): never {
    this.#host.turns.sawEvent();
    const message = terminalRefusal(method);
    this.#host.report('acp_refused', message, { method });
    throw new RequestError(-32000, message);
  }

  async permission(request: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const host = this.#host;
    host.turns.sawEvent();
    if (!host.live) return CANCELLED;
    const { toolCall } = request;
    const translator = host.translator;
    const planExit =
      isPlanExitRequest(request, { otherModeIds: host.guard.otherModeIds() }) || host.quirks.ownPlanExit(toolCall) !== undefined;
    if (!host.guard.approved && planExit) {
      host.log(`plan review requested (${toolCall.toolCallId})`);
      const plan = await host.planTexts.ofExitRequest(toolCall);
      translator.flush();
      const toolUseId = translator.exitPlanToolUse(toolCall.toolCallId, plan);
      return new Promise<RequestPermissionResponse>((answer) => {
        host.reviews.open(
          { kind: 'plan_permission', toolUseId, agentToolCallId: toolCall.toolCallId, plan, options: request.options, answer },
          toolUseId,
          'ExitPlanMode',
          { plan },
        );
      });
    }
    const kind = toolCall.kind ?? translator.toolCall(toolCall.toolCallId)?.kind ?? 'other';
    const title = toolCall.title ?? translator.toolCall(toolCall.toolCallId)?.title ?? toolCall.toolCallId;
    if (!host.guard.approved) return this.#whilePlanning(request, kind, title);
    if (host.afterApproval === 'acceptEdits' && kind === 'edit' && this.#editsOnlyWorkspace(toolCall)) {
      // The person chose to accept edits; the agent may ask before its switch to that mode lands.
      const allow = chooseToolAllowOption(host.label, request.options);
      if (allow.ok) {
        host.log(`accepted the edit "${title}" (ultraplan.afterApproval = acceptEdits)`);
        return { outcome: { outcome: 'selected', optionId: allow.option.optionId } };
      }
    }
    // After approval the agent executes; each permission it asks goes to the reviewer.
    return this.#askPerson(toolCall, title, request.options);
  }

  async #whilePlanning(request: RequestPermissionRequest, kind: string, title: string): Promise<RequestPermissionResponse> {
    const host = this.#host;
    const { toolCall } = request;
    let message = permissionRefusal(kind, title);
    if (LOOKING_TOOL_KINDS.has(kind)) {
      const verdict = this.#byOutsideAccess(await this.#lookingVerdict(kind, toolCall), title);
      if (verdict.kind === 'allow') {
        const allow = request.options.find((option) => option.kind === 'allow_once');
        host.log(`allowed "${title}" (${kind}) while planning`);
        return allow ? { outcome: { outcome: 'selected', optionId: allow.optionId } } : CANCELLED;
      }
      if (verdict.kind === 'ask') {
        host.log(`asked the person about "${title}" (${kind}) while planning: ${verdict.reason}`);
        return this.#askPerson(toolCall, title, request.options);
      }
      message = verdict.message;
    }
    host.guard.changeRefused();
    if (isUnclearRequest(toolCall, host.translator.toolCall(toolCall.toolCallId)?.kind ?? undefined)) {
      // It may have been a plan exit we do not recognise: the person hears of it, not only the
      // agent, in the conversation they read (the session's last message when the turn ends).
      const unclear =
        `${host.label} asked permission for "${title}" (kind ${kind}) while planning, with the options ` +
        `${request.options.map((option) => `"${option.name}"`).join(', ') || 'none'}. Ultraplan cannot tell whether this ` +
        `is its request to leave plan mode or a change, so it refused it to keep planning read-only. If it was the plan, ` +
        `ask the agent to show the plan as text.`;
      host.report('acp_unclear_request', unclear, { kind, title });
      host.translator.flush();
      host.translator.assistantText(`Ultraplan: ${unclear}`);
    } else {
      host.report('acp_refused', message, { method: 'session/request_permission', kind, title });
    }
    const reject = chooseRejectOption(host.label, request.options);
    const meta = { ultraplan: { refused: message } };
    return reject.ok ? { outcome: { outcome: 'selected', optionId: reject.option.optionId }, _meta: meta } : { ...CANCELLED, _meta: meta };
  }

  /** A permission request put to the person in the review; answered by their choice. */
  #askPerson(
    toolCall: RequestPermissionRequest['toolCall'],
    title: string,
    options: RequestPermissionRequest['options'],
  ): Promise<RequestPermissionResponse> {
    this.#host.translator.ensureToolUse(toolCall);
    return new Promise<RequestPermissionResponse>((answer) => {
      this.#host.reviews.open(
        { kind: 'tool_permission', toolUseId: toolCall.toolCallId, options, answer },
        toolCall.toolCallId,
        title,
        toolCall.rawInput ?? {},
      );
    });
  }

  /** An edit whose every named file is inside the workspace, outside .git (and at least one is named). */
  #editsOnlyWorkspace(toolCall: ToolCallUpdate): boolean {
    const files = [
      ...(toolCall.locations ?? []).map((location) => location.path),
      ...(toolCall.content ?? []).flatMap((item) => (item.type === 'diff' ? [item.path] : [])),
    ];
    const workspace = this.#host.workspace;
    return (
      files.length > 0 &&
      files.every(
        (file) => path.isAbsolute(file) && isInside(workspace, path.resolve(file)) && !path.resolve(file).split(path.sep).includes('.git'),
      )
    );
  }

  async elicitation(request: CreateElicitationRequest): Promise<CreateElicitationResponse> {
    const host = this.#host;
    host.turns.sawEvent();
    if (!host.live) return { action: 'cancel' };
    const form = host.guard.approved ? undefined : planReviewForm(request);
    const translator = host.translator;
    if (!form) {
      const question = questionForm(request);
      if (!question || this.#pendingQuestion) {
        host.report(
          'acp_elicitation_declined',
          `${host.label} asked "${request.message}" in a way Ultraplan cannot show, so it declined.`,
          {},
        );
        return { action: 'decline' };
      }
      // A question for the person: it goes to the log as the agent's message; their reply answers it.
      translator.assistantText(question.text);
      return new Promise<CreateElicitationResponse>((answer) => {
        this.#pendingQuestion = { form: question, answer };
        host.setStatus('requires_action');
      });
    }
    const { plan, toolCallId } = host.planTexts.ofElicitation(form, request.message);
    translator.flush();
    const toolUseId = translator.exitPlanToolUse(toolCallId, plan);
    return new Promise<CreateElicitationResponse>((answer) => {
      host.reviews.open({ kind: 'plan_elicitation', toolUseId, plan, form, answer }, toolUseId, 'ExitPlanMode', { plan });
    });
  }

  /**
   * A looking tool call while planning: a fetch goes to the person (it can send what was read to
   * anyone); a read or search is allowed inside the workspace, goes to the person outside it, and
   * is refused for the kernel's files and our secrets.
   */
  async #lookingVerdict(kind: string, toolCall: ToolCallUpdate): Promise<ReadVerdict> {
    if (kind === 'fetch') return { kind: 'ask', reason: 'a fetch can send what the agent read to anyone' };
    if (kind === 'think') return { kind: 'allow' };
    const host = this.#host;
    const remembered = host.translator.toolCall(toolCall.toolCallId);
    let result: ReadVerdict = { kind: 'allow' };
    for (const looked of lookedAtPaths(
      { rawInput: toolCall.rawInput ?? remembered?.rawInput, locations: toolCall.locations },
      host.workspace,
      host.home,
    )) {
      const { verdict } = await host.files.readVerdict(looked);
      if (verdict.kind === 'refuse') return verdict;
      if (verdict.kind === 'ask' && result.kind === 'allow') result = verdict;
    }
    return result;
  }

  /** A question for the person, unless ultraplan's outside-access setting answers it. */
  #byOutsideAccess(verdict: ReadVerdict, what: string): ReadVerdict {
    const access = this.#host.outsideAccess;
    if (verdict.kind !== 'ask' || access === 'ask') return verdict;
    this.#host.log(
      `${access === 'allow' ? 'allowed' : 'refused'} "${what}" without asking (outside access "${access}"): ${verdict.reason}`,
    );
    return access === 'allow'
      ? { kind: 'allow' }
      : {
          kind: 'refuse',
          message: `Ultraplan refused "${what}": ${verdict.reason}, and reads outside the workspace and fetches are set to be refused.`,
        };
  }

  async readFile(request: ReadTextFileRequest, RequestError: RequestErrorClass): Promise<{ content: string }> {
    const host = this.#host;
    host.turns.sawEvent();
    const outcome = await host.files.read(request.path, (real, reason) => this.#askToRead(real, reason));
    if (
      !outcome.ok &&
      outcome.missing &&
      host.quirks.readsMissingAsEmptyOnceApproved &&
      host.guard.approved &&
      isInside(host.workspace, path.resolve(request.path))
    ) {
      // An edit tool that reads a file before writing it and takes any error for an unreadable
      // file (agents/gemini.ts): once it may edit, a file to be created reads as empty.
      return { content: '' };
    }
    if (!outcome.ok) {
      if (outcome.refused) host.report('acp_refused', outcome.message, { method: 'fs/read_text_file', path: request.path });
      throw new RequestError(outcome.refused ? -32000 : -32002, outcome.message);
    }
    const content = outcome.value;
    if (request.line == null && request.limit == null) return { content };
    const lines = content.split('\n');
    const start = Math.max(0, (request.line ?? 1) - 1);
    const end = request.limit == null ? lines.length : start + Math.max(0, request.limit);
    return { content: lines.slice(start, end).join('\n') };
  }

  /** A read outside the workspace goes to the person, through the same path as any tool permission. */
  #askToRead(real: string, reason: string): Promise<boolean> {
    const host = this.#host;
    if (!host.live) return Promise.resolve(false);
    const verdict = this.#byOutsideAccess({ kind: 'ask', reason }, `Read ${real}`);
    if (verdict.kind !== 'ask') return Promise.resolve(verdict.kind === 'allow');
    host.log(`asked the person to allow reading ${real} (${reason})`);
    return new Promise<boolean>((answer) => {
      const toolUseId = `read-${randomUUID()}`;
      // A tool_use and, once answered, its tool_result: every reader of the log sees the request settle.
      host.translator.ensureToolUse({ toolCallId: toolUseId, title: `Read ${real}`, kind: 'read', rawInput: { file_path: real } });
      host.reviews.open(
        {
          kind: 'file_read',
          answer: (decision) => {
            const allowed = decision === 'allow';
            host.log(
              decision === 'cancel'
                ? `the request to read ${real} ended unanswered`
                : `the person ${allowed ? 'allowed' : 'denied'} reading ${real}`,
            );
            host.translator.toolResult(
              toolUseId,
              allowed ? `The person allowed reading ${real}.` : accessDenial(`reading ${real}`),
              !allowed,
            );
            answer(allowed);
          },
        },
        toolUseId,
        'Read',
        { file_path: real, reason },
      );
    });
  }

  async writeFile(request: WriteTextFileRequest, RequestError: RequestErrorClass): Promise<Record<string, never>> {
    const host = this.#host;
    host.turns.sawEvent();
    const outcome = await host.files.write(request.path, request.content, !host.guard.approved);
    if (!outcome.ok) {
      if (outcome.refused) host.guard.changeRefused();
      if (outcome.refused) host.report('acp_refused', outcome.message, { method: 'fs/write_text_file', path: request.path });
      throw new RequestError(outcome.refused ? -32000 : -32603, outcome.message);
    }
    // The plan file: remembered so the exit request naming it reads what was written.
    if (outcome.value === 'plan') host.log(`wrote the plan file ${path.resolve(request.path)}`);
    return {};
  }
}
