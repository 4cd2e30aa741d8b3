// The scenario file of the scripted agent: {"title"?, "steps":[...], "onApprove"?:[...]}, a step
// being one of
//   {"say": text} | {"tool": name, "input"?: {...}, "result": text, "is_error"?: bool}
//   {"ask": question} | {"plan": markdown} | {"fail": error subtype, "message"?: text} | {"sleep": ms}
// The window reads it to report a broken file before a session is made; the service reads it again
// to run it (src/agents/scripted).
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as z from 'zod';
import { EXIT_PLAN_MODE_TOOL, RESULT_ERROR_SUBTYPES } from '../../core/protocol';
import { errorMessage } from '../../core/errors';

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
    throw new ScenarioError([`not valid JSON: ${errorMessage(err)}`], file);
  }
  return parseScenario(value, file);
}
