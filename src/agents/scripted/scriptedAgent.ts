// ScriptedAgent: an agent whose every move comes from a scenario file, for demos and tests.
// It speaks the same events a real plan-mode agent does (docs/protocol.md sections 2-3), so the
// poller, the scanner and the review panel cannot tell it apart from one.
//
// Its scenario file is read by src/agents/catalogue/scenario.ts. In a step's text `{{task}}` stands
// for the task in the prompt's own words (taskFromPrompt), `{{reply}}` for the person's last reply
// to a question and `{{feedback}}` for the last reject's feedback with its line comments, so the
// shipped demo plans the task it was given and revises with the person's words, with a script,
// and says so.
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  EXIT_PLAN_MODE_TOOL,
  ULTRAPLAN_TELEPORT_SENTINEL,
  type AnyEvent,
  type PermissionDecision,
} from '../../core/protocol';
import type { Agent, AgentContext, AgentFactory, AgentStartOptions } from '../agent';
import type { Scenario } from '../catalogue/scenario';
import { errorMessage } from '../../core/errors';

// ---------------------------------------------------------------------------------------------
// The task in the prompt's words

const MAX_TASK_CHARS = 100;
const MAX_REPLY_CHARS = 300;
const MAX_FEEDBACK_CHARS = 2000;

/** What the person said, as far as a script can take it in. */
interface Words {
  task: string;
  reply: string;
  feedback: string;
}

/** Text cut at a word boundary to `max` characters, with an ellipsis when cut. */
function clip(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const cut = trimmed.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * The task as the prompt words it: its first non-empty line, spaces collapsed, cut at a word
 * boundary to MAX_TASK_CHARS. Empty for an empty prompt.
 */
export function taskFromPrompt(prompt: string): string {
  const line =
    prompt
      .split('\n')
      .map((l) => l.replace(/\s+/g, ' ').trim())
      .find((l) => l !== '') ?? '';
  if (line.length <= MAX_TASK_CHARS) return line.replace(/[.\s]+$/, '');
  const cut = line.slice(0, MAX_TASK_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${(space > MAX_TASK_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[,;:.\s]+$/, '')}…`;
}

/** The task as literal text inside Markdown: the characters that would format it are escaped. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()<>#+!|~]/g, '\\$&');
}

/** Feedback inside a plan: a block quote of its lines, each escaped, so it cannot format the plan. */
function quoteMarkdown(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => (line.trim() === '' ? '>' : `> ${escapeMarkdown(line.replace(/^[>\s]+/, ''))}`))
    .join('\n');
}

/** `{{task}}`, `{{reply}}` and `{{feedback}}` in a step's text replaced; `plan` text gets them as literal Markdown. */
export function fillWords(text: string, words: Words, inPlan: boolean): string {
  const task = words.task || 'the task';
  const reply = words.reply || 'no reply given';
  const feedback = words.feedback || 'no feedback given';
  const values: Record<string, string> = inPlan
    ? { task: escapeMarkdown(task), reply: escapeMarkdown(reply), feedback: quoteMarkdown(feedback) }
    : { task, reply, feedback };
  return text.replace(/\{\{(task|reply|feedback)\}\}/g, (_m, name: string) => values[name]!);
}

// ---------------------------------------------------------------------------------------------
// The agent

type Waiting =
  { kind: 'none' } | { kind: 'user' } | { kind: 'decision'; requestId: string; toolUseId: string; plan: string } | { kind: 'done' };

const CheckpointSchema = z.object({
  v: z.literal(1),
  fingerprint: z.string(),
  task: z
    .string()
    .max(MAX_TASK_CHARS + 1)
    .optional(),
  reply: z
    .string()
    .max(MAX_REPLY_CHARS + 1)
    .optional(),
  feedback: z
    .string()
    .max(MAX_FEEDBACK_CHARS + 1)
    .optional(),
  list: z.enum(['steps', 'onApprove']),
  index: z.number().int().min(0),
  turns: z.number().int().min(1),
  waiting: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('none') }),
    z.object({ kind: z.literal('user') }),
    z.object({ kind: z.literal('decision'), requestId: z.string(), toolUseId: z.string(), plan: z.string() }),
    z.object({ kind: z.literal('done') }),
  ]),
});
type Checkpoint = z.infer<typeof CheckpointSchema>;

export class ScriptedAgent implements Agent {
  private ctx: AgentContext | null = null;
  private readonly stopper = new AbortController();
  private signal: AbortSignal = this.stopper.signal;
  private list: 'steps' | 'onApprove' = 'steps';
  private index = 0;
  private turns = 1;
  private waiting: Waiting = { kind: 'none' };
  private running = false;
  private words: Words = { task: '', reply: '', feedback: '' };
  /** The turn's last assistant text, which its result carries as a real agent's does (a review reads it there). */
  private said = '';

  constructor(
    private readonly scenario: Scenario,
    readonly label: string = `Scripted${scenario.title ? ` (${scenario.title})` : ''}`,
  ) {}

  async start(ctx: AgentContext, prompt: string, options?: AgentStartOptions): Promise<void> {
    this.attach(ctx);
    this.words = { task: taskFromPrompt(prompt), reply: '', feedback: '' };
    // Carrying out a plan approved before it ran: the scenario's steps after approval.
    if (options?.carryOut) this.list = 'onApprove';
    const tools = [...new Set(this.scenario.steps.concat(this.scenario.onApprove).flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])))];
    ctx.emit({
      type: 'system',
      subtype: 'init',
      permissionMode: options?.carryOut ? 'default' : 'plan',
      model: 'scripted',
      cwd: process.cwd(),
      tools: [...tools, EXIT_PLAN_MODE_TOOL],
    });
    ctx.setStatus('running');
    this.saveCheckpoint();
    this.runInBackground();
  }

  async resume(ctx: AgentContext, checkpoint: unknown): Promise<boolean> {
    const parsed = CheckpointSchema.safeParse(checkpoint);
    if (!parsed.success) {
      ctx.log('scripted agent: the saved state is unreadable; not resuming');
      return false;
    }
    if (parsed.data.fingerprint !== this.scenario.fingerprint) {
      ctx.log('scripted agent: the scenario file changed since this session started; not resuming');
      return false;
    }
    this.attach(ctx);
    this.words = { task: parsed.data.task ?? '', reply: parsed.data.reply ?? '', feedback: parsed.data.feedback ?? '' };
    this.list = parsed.data.list;
    this.index = parsed.data.index;
    this.turns = parsed.data.turns;
    this.waiting = parsed.data.waiting;
    if (this.waiting.kind === 'none') {
      ctx.setStatus('running');
      this.runInBackground();
    }
    return true;
  }

  onUserMessage(text: string): void {
    // A scenario's next steps are fixed; the reply reaches them only as `{{reply}}`.
    const ctx = this.ctx;
    if (!ctx) return;
    if (this.waiting.kind === 'user') {
      this.words = { ...this.words, reply: clip(text.replace(/\s+/g, ' '), MAX_REPLY_CHARS) };
      this.waiting = { kind: 'none' };
      this.turns += 1;
      ctx.setStatus('running');
      this.saveCheckpoint();
      this.runInBackground();
    } else if (this.waiting.kind === 'done') {
      this.turns += 1;
      this.say(ctx, 'This scripted scenario has ended; there is nothing more to do.');
      this.endTurn(ctx);
      this.saveCheckpoint();
    } else {
      ctx.log(
        `scripted agent: a user message arrived while ${this.waiting.kind === 'decision' ? 'awaiting a plan decision' : 'working'}; it stays in the log only`,
      );
    }
  }

  onDecision(requestId: string, decision: PermissionDecision): void {
    const ctx = this.ctx;
    const waiting = this.waiting;
    if (!ctx) return;
    if (waiting.kind !== 'decision' || waiting.requestId !== requestId) {
      ctx.log(`scripted agent: ignoring a decision on ${requestId}, which is not the plan it awaits`);
      return;
    }
    this.waiting = { kind: 'none' };
    this.turns += 1;
    if (decision.behavior === 'allow') {
      const edited = decision.updatedInput.plan;
      const text =
        typeof edited === 'string' && edited !== waiting.plan
          ? `${APPROVED_PLAN_EDITED_MARKER}${edited}`
          : `${APPROVED_PLAN_MARKER}${waiting.plan}`;
      ctx.emit(toolResult(waiting.toolUseId, `User has approved your plan. You can now start coding.\n\n${text}`, false));
      this.list = 'onApprove';
      this.index = 0;
      ctx.setStatus('running');
      this.saveCheckpoint();
      this.runInBackground();
      return;
    }
    ctx.emit(toolResult(waiting.toolUseId, decision.message, true));
    this.words = { ...this.words, feedback: clip(decision.message, MAX_FEEDBACK_CHARS) };
    if (decision.message.includes(ULTRAPLAN_TELEPORT_SENTINEL)) {
      // Teleported: the plan runs on the reviewer's machine; this session stays in plan mode.
      ctx.emit(resultEvent('success', this.turns));
      this.waiting = { kind: 'done' };
      ctx.setStatus('idle');
      this.saveCheckpoint();
      return;
    }
    ctx.setStatus('running');
    this.saveCheckpoint();
    this.runInBackground();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
  }

  private fill(text: string, inPlan = false): string {
    return fillWords(text, this.words, inPlan);
  }

  private say(ctx: AgentContext, text: string): void {
    this.said = text;
    ctx.emit(assistantText(text));
  }

  private endTurn(ctx: AgentContext): void {
    ctx.emit(resultEvent('success', this.turns, undefined, this.said));
    this.said = '';
  }

  private attach(ctx: AgentContext): void {
    this.ctx = ctx;
    this.signal = AbortSignal.any([ctx.signal, this.stopper.signal]);
  }

  private saveCheckpoint(): void {
    const state: Checkpoint = {
      v: 1,
      fingerprint: this.scenario.fingerprint,
      task: this.words.task,
      reply: this.words.reply,
      feedback: this.words.feedback,
      list: this.list,
      index: this.index,
      turns: this.turns,
      waiting: this.waiting,
    };
    this.ctx?.checkpoint?.(state);
  }

  private runInBackground(): void {
    if (this.running) return;
    this.running = true;
    this.run()
      .catch((err: unknown) => {
        if (this.signal.aborted) return;
        this.ctx?.log(`scripted agent failed: ${errorMessage(err)}`);
        this.ctx?.emit(resultEvent('error_during_execution', this.turns, String(err)));
        this.waiting = { kind: 'done' };
        this.ctx?.setStatus('idle');
      })
      .finally(() => {
        this.running = false;
      });
  }

  /** Runs steps until one waits (ask, plan), the script ends, or the agent is stopped. */
  private async run(): Promise<void> {
    const ctx = this.ctx;
    if (!ctx) return;
    while (!this.signal.aborted) {
      const steps = this.list === 'steps' ? this.scenario.steps : this.scenario.onApprove;
      const step = steps[this.index];
      if (!step) {
        // The notice is for the person reading the log; the turn's reply (its result) stays what the scenario said.
        if (this.list === 'steps') {
          const notice = 'The scenario has no further steps.';
          ctx.emit(assistantText(notice));
          this.said ||= notice;
        }
        this.endTurn(ctx);
        this.waiting = { kind: 'done' };
        ctx.setStatus('idle');
        this.saveCheckpoint();
        return;
      }
      if (step.kind === 'sleep') {
        await sleep(step.sleep, this.signal);
        if (this.signal.aborted) return;
      }
      this.index += 1;
      switch (step.kind) {
        case 'sleep':
          break;
        case 'say':
          this.say(ctx, this.fill(step.say));
          break;
        case 'tool': {
          const toolUseId = newId('toolu');
          ctx.emit(assistantContent([{ type: 'tool_use', id: toolUseId, name: step.tool, input: step.input }]));
          ctx.emit(toolResult(toolUseId, this.fill(step.result), step.is_error));
          break;
        }
        case 'ask':
          this.say(ctx, this.fill(step.ask));
          this.endTurn(ctx);
          this.waiting = { kind: 'user' };
          ctx.setStatus('idle');
          this.saveCheckpoint();
          return;
        case 'plan': {
          const plan = this.fill(step.plan, true);
          const toolUseId = newId('toolu');
          const requestId = newId('req');
          ctx.emit(assistantContent([{ type: 'tool_use', id: toolUseId, name: EXIT_PLAN_MODE_TOOL, input: { plan } }]));
          ctx.emit({
            type: 'control_request',
            request_id: requestId,
            request: { subtype: 'can_use_tool', tool_name: EXIT_PLAN_MODE_TOOL, input: { plan }, tool_use_id: toolUseId },
          });
          this.waiting = { kind: 'decision', requestId, toolUseId, plan };
          ctx.setStatus('requires_action');
          this.saveCheckpoint();
          return;
        }
        case 'fail':
          ctx.emit(
            resultEvent(
              step.fail,
              this.turns,
              step.message !== undefined ? this.fill(step.message) : `The scripted scenario failed with ${step.fail}.`,
            ),
          );
          this.waiting = { kind: 'done' };
          ctx.setStatus('idle');
          this.saveCheckpoint();
          return;
      }
      this.saveCheckpoint();
    }
  }
}

/** An AgentFactory giving every session its own ScriptedAgent over one scenario. */
export function scriptedAgentFactory(scenario: Scenario, label?: string): AgentFactory {
  return () => new ScriptedAgent(scenario, label);
}

function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

function assistantContent(content: unknown[]): AnyEvent {
  return { type: 'assistant', parent_tool_use_id: null, message: { role: 'assistant', content } };
}

function assistantText(text: string): AnyEvent {
  return assistantContent([{ type: 'text', text }]);
}

function toolResult(toolUseId: string, content: string, isError: boolean): AnyEvent {
  return {
    type: 'user',
    parent_tool_use_id: null,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content, ...(isError ? { is_error: true } : {}) }] },
  };
}

function resultEvent(subtype: string, turns: number, error?: string, text?: string): AnyEvent {
  const isError = subtype !== 'success';
  return {
    type: 'result',
    subtype,
    is_error: isError,
    num_turns: turns,
    ...(text ? { result: text } : {}),
    ...(isError ? { errors: [error ?? subtype] } : {}),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
