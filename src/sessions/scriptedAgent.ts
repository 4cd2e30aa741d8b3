// ScriptedAgent: an agent whose every move comes from a scenario file, for demos and tests.
// It speaks the same events a real plan-mode agent does (docs/protocol.md sections 2-3), so the
// poller, the scanner and the review panel cannot tell it apart from one.
//
// Scenario: {"title"?, "steps":[...], "onApprove"?:[...]}, a step being one of
//   {"say": text} | {"tool": name, "input"?: {...}, "result": text, "is_error"?: bool}
//   {"ask": question} | {"plan": markdown} | {"fail": error subtype, "message"?: text} | {"sleep": ms}
// `{{task}}` in a step's text stands for the task in the prompt's own words (taskFromPrompt), so
// the shipped demo plans the task it was given, with a script, and says so.
import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as z from 'zod';
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  EXIT_PLAN_MODE_TOOL,
  RESULT_ERROR_SUBTYPES,
  ULTRAPLAN_TELEPORT_SENTINEL,
  type AnyEvent,
  type PermissionDecision,
} from '../core/protocol';
import type { Agent, AgentContext, AgentFactory } from './agent';

// ---------------------------------------------------------------------------------------------
// Scenario format

const MAX_SLEEP_MS = 10 * 60 * 1000;

const STEP_SCHEMAS = {
  say: z.strictObject({ say: z.string().min(1, 'say needs some text') }),
  tool: z.strictObject({
    tool: z.string().min(1, 'tool needs a tool name'),
    input: z.record(z.string(), z.unknown()).optional(),
    result: z.string(),
    is_error: z.boolean().optional(),
  }),
  ask: z.strictObject({ ask: z.string().min(1, 'ask needs the question text') }),
  plan: z.strictObject({ plan: z.string().min(1, 'plan needs the plan markdown') }),
  fail: z.strictObject({ fail: z.enum(RESULT_ERROR_SUBTYPES), message: z.string().optional() }),
  sleep: z.strictObject({ sleep: z.number().int().min(0).max(MAX_SLEEP_MS) }),
} as const;

export type StepKind = keyof typeof STEP_SCHEMAS;
export const STEP_KINDS = Object.keys(STEP_SCHEMAS) as StepKind[];

export type ScenarioStep =
  | { kind: 'say'; say: string }
  | { kind: 'tool'; tool: string; input: Record<string, unknown>; result: string; is_error: boolean }
  | { kind: 'ask'; ask: string }
  | { kind: 'plan'; plan: string }
  | { kind: 'fail'; fail: (typeof RESULT_ERROR_SUBTYPES)[number]; message?: string }
  | { kind: 'sleep'; sleep: number };

export interface Scenario {
  title?: string;
  steps: ScenarioStep[];
  onApprove: ScenarioStep[];
  /** sha256 of the scenario's canonical JSON: a checkpoint only resumes the same scenario. */
  fingerprint: string;
}

// Steps run after approval execute the plan: no second plan and no question there.
const ON_APPROVE_KINDS: ReadonlySet<StepKind> = new Set(['say', 'tool', 'sleep', 'fail']);

const ScenarioShapeSchema = z.strictObject({
  title: z.string().min(1).max(500).optional(),
  steps: z.array(z.unknown()).min(1, 'steps needs at least one step'),
  onApprove: z.array(z.unknown()).optional(),
});

/** A scenario that does not validate; `problems` lists each one with where it is. */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
  constructor(
    readonly problems: string[],
    source?: string,
  ) {
    super(`${source ? `${source}: ` : ''}invalid scenario:\n  - ${problems.join('\n  - ')}`);
  }
}

/** Validates a parsed scenario JSON value. Throws ScenarioError naming every bad step. */
export function parseScenario(value: unknown, source?: string): Scenario {
  const shape = ScenarioShapeSchema.safeParse(value);
  if (!shape.success) throw new ScenarioError(zodProblems(shape.error, ''), source);
  const problems: string[] = [];
  const steps = parseSteps(shape.data.steps, 'steps', problems, null);
  const onApprove = parseSteps(shape.data.onApprove ?? [], 'onApprove', problems, ON_APPROVE_KINDS);
  if (problems.length > 0) throw new ScenarioError(problems, source);
  const canonical = JSON.stringify({ title: shape.data.title, steps, onApprove });
  return {
    ...(shape.data.title !== undefined ? { title: shape.data.title } : {}),
    steps,
    onApprove,
    fingerprint: createHash('sha256').update(canonical).digest('hex'),
  };
}

function parseSteps(raw: unknown[], list: string, problems: string[], allowed: ReadonlySet<StepKind> | null): ScenarioStep[] {
  const steps: ScenarioStep[] = [];
  raw.forEach((value, index) => {
    const at = `${list}[${index}]`;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${at}: a step is an object such as {"say": "text"}`);
      return;
    }
    const kinds = STEP_KINDS.filter((k) => k in value);
    if (kinds.length !== 1) {
      problems.push(
        kinds.length === 0
          ? `${at}: unknown step; a step has exactly one of ${STEP_KINDS.map((k) => `"${k}"`).join(', ')} (keys: ${Object.keys(value).join(', ') || 'none'})`
          : `${at}: a step has exactly one of ${STEP_KINDS.join('/')}, this one has ${kinds.join(' and ')}`,
      );
      return;
    }
    const kind = kinds[0] as StepKind;
    if (allowed && !allowed.has(kind)) {
      problems.push(`${at} (${kind}): not allowed in ${list}; it may hold ${[...allowed].join(', ')}`);
      return;
    }
    const parsed = STEP_SCHEMAS[kind].safeParse(value);
    if (!parsed.success) {
      problems.push(...zodProblems(parsed.error, `${at} (${kind})`));
      return;
    }
    const data = parsed.data as Record<string, unknown>;
    if (kind === 'tool') {
      const tool = parsed.data as z.infer<(typeof STEP_SCHEMAS)['tool']>;
      if (tool.tool === EXIT_PLAN_MODE_TOOL) {
        problems.push(`${at} (tool): use a "plan" step to call ${EXIT_PLAN_MODE_TOOL}`);
        return;
      }
      steps.push({ kind, tool: tool.tool, input: tool.input ?? {}, result: tool.result, is_error: tool.is_error ?? false });
    } else {
      steps.push({ kind, ...data } as ScenarioStep);
    }
  });
  return steps;
}

function zodProblems(error: z.ZodError, prefix: string): string[] {
  return error.issues.map((issue) => {
    const where = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
    const at = `${prefix}${where}`.replace(/^\./, '');
    return `${at || 'scenario'}: ${issue.message}`;
  });
}

/** Reads and validates a scenario file; errors name the file, the step and the problem. */
export async function loadScenarioFile(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new ScenarioError([`cannot read the scenario file (${(err as NodeJS.ErrnoException).code ?? String(err)})`], file);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ScenarioError([`not valid JSON: ${err instanceof Error ? err.message : String(err)}`], file);
  }
  return parseScenario(value, file);
}

// ---------------------------------------------------------------------------------------------
// The task in the prompt's words

const TASK_PLACEHOLDER = '{{task}}';
const MAX_TASK_CHARS = 100;

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
  private task = '';

  constructor(
    private readonly scenario: Scenario,
    readonly label: string = `Scripted${scenario.title ? ` (${scenario.title})` : ''}`,
  ) {}

  async start(ctx: AgentContext, prompt: string): Promise<void> {
    this.attach(ctx);
    this.task = taskFromPrompt(prompt);
    const tools = [...new Set(this.scenario.steps.concat(this.scenario.onApprove).flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])))];
    ctx.emit({
      type: 'system',
      subtype: 'init',
      permissionMode: 'plan',
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
    this.task = parsed.data.task ?? '';
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

  onUserMessage(_text: string): void {
    // The text is already in the session log; a scenario's next steps are fixed, so the reply
    // matters to the reader of the log, not to what the script does.
    const ctx = this.ctx;
    if (!ctx) return;
    if (this.waiting.kind === 'user') {
      this.waiting = { kind: 'none' };
      this.turns += 1;
      ctx.setStatus('running');
      this.saveCheckpoint();
      this.runInBackground();
    } else if (this.waiting.kind === 'done') {
      this.turns += 1;
      ctx.emit(assistantText('This scripted scenario has ended; there is nothing more to do.'));
      ctx.emit(resultEvent('success', this.turns));
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

  /** A step's text with `{{task}}` replaced by the task (escaped for Markdown in a plan). */
  private fill(text: string, escape: (task: string) => string = (t) => t): string {
    return text.includes(TASK_PLACEHOLDER) ? text.split(TASK_PLACEHOLDER).join(escape(this.task || 'the task')) : text;
  }

  private attach(ctx: AgentContext): void {
    this.ctx = ctx;
    this.signal = AbortSignal.any([ctx.signal, this.stopper.signal]);
  }

  private saveCheckpoint(): void {
    const state: Checkpoint = {
      v: 1,
      fingerprint: this.scenario.fingerprint,
      task: this.task,
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
        this.ctx?.log(`scripted agent failed: ${err instanceof Error ? err.message : String(err)}`);
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
        if (this.list === 'steps') ctx.emit(assistantText('The scenario has no further steps.'));
        ctx.emit(resultEvent('success', this.turns));
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
          ctx.emit(assistantText(this.fill(step.say)));
          break;
        case 'tool': {
          const toolUseId = newId('toolu');
          ctx.emit(assistantContent([{ type: 'tool_use', id: toolUseId, name: step.tool, input: step.input }]));
          ctx.emit(toolResult(toolUseId, this.fill(step.result), step.is_error));
          break;
        }
        case 'ask':
          ctx.emit(assistantText(this.fill(step.ask)));
          ctx.emit(resultEvent('success', this.turns));
          this.waiting = { kind: 'user' };
          ctx.setStatus('idle');
          this.saveCheckpoint();
          return;
        case 'plan': {
          const plan = this.fill(step.plan, escapeMarkdown);
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

function resultEvent(subtype: string, turns: number, error?: string): AnyEvent {
  const isError = subtype !== 'success';
  return {
    type: 'result',
    subtype,
    is_error: isError,
    num_turns: turns,
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
