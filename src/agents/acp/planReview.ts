// Recognising an ACP agent's request to leave plan mode, reading the plan out of it, and choosing
// the answer the reviewer's decision stands for. Pure: no I/O (a plan file is named here and read
// by the caller).
import type { CreateElicitationRequest, PermissionOption, ToolCallUpdate } from '@agentclientprotocol/sdk' with {
  'resolution-mode': 'import',
};

import type { AfterApproval } from '../../core/agentSettings';

export { AFTER_APPROVAL_VALUES, type AfterApproval } from '../../core/agentSettings';

const BYPASS_PATTERN = /bypass|yolo|dangerous|skip.?permission|full.?access|don'?t ask/i;
const ACCEPT_EDITS_PATTERN = /accept.?edits|auto.?accept/i;
const MANUAL_PATTERN = /manual/i;
/** Options that do more than approve: Claude's auto mode (a classifier decides), clearing the context. */
const SPECIAL_PATTERN = /auto.?mode|exit-plan-auto|clear.?context|exit-plan-clear/i;
const KEEP_PLANNING_PATTERN = /keep.?planning|continue.?planning|revise/i;
const EXIT_PLAN_TITLE_PATTERN = /exit.?plan|plan.?mode|implement.?this.?plan|ready.?to.?code|approve.?plan/i;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The plan text a tool call carries in `rawInput.plan`, if any. */
export function rawInputPlan(toolCall: Pick<ToolCallUpdate, 'rawInput'>): string | undefined {
  const input = toolCall.rawInput;
  if (isRecord(input) && typeof input.plan === 'string' && input.plan.trim()) return input.plan;
  return undefined;
}

/** The text content blocks of a tool call, joined. */
export function toolCallText(toolCall: Pick<ToolCallUpdate, 'content'>): string {
  const parts: string[] = [];
  for (const item of toolCall.content ?? []) {
    if (item.type === 'content' && item.content.type === 'text') parts.push(item.content.text);
  }
  return parts.join('\n');
}

const PLAN_PATH_KEYS = [
  'plan_path',
  'planPath',
  'plan_file',
  'planFile',
  'plan_file_path',
  'planFilePath',
  'file_path',
  'filePath',
  'path',
];

/** The plan file a tool call names: a plan-path key of rawInput, else its first location. */
export function namedPlanFile(toolCall: Pick<ToolCallUpdate, 'rawInput' | 'locations'>): string | undefined {
  const input = toolCall.rawInput;
  if (isRecord(input)) {
    for (const key of PLAN_PATH_KEYS) {
      const value = input[key];
      if (typeof value === 'string' && value.trim()) return value;
    }
  }
  const location = toolCall.locations?.[0];
  return location?.path || undefined;
}

/** Where the plan of an exit request is: inline text, or a file to read. */
export type PlanSource = { kind: 'text'; text: string } | { kind: 'file'; path: string } | { kind: 'none' };

export function planSource(toolCall: Pick<ToolCallUpdate, 'rawInput' | 'content' | 'locations'>): PlanSource {
  const inline = rawInputPlan(toolCall);
  if (inline) return { kind: 'text', text: inline };
  const text = toolCallText(toolCall);
  if (text.trim()) return { kind: 'text', text };
  const file = namedPlanFile(toolCall);
  if (file) return { kind: 'file', path: file };
  return { kind: 'none' };
}

/**
 * Whether a permission request asks to leave plan mode (Claude's adapter: rawInput.plan and a
 * "keep planning" option; Codex: kind switch_mode, "Implement this plan?"). For an agent we do
 * not know, a request whose allow option is named after one of its other modes (`modes`: the
 * session's mode ids besides plan mode) leaves plan mode too.
 */
export function isPlanExitRequest(
  request: { toolCall: ToolCallUpdate; options: readonly PermissionOption[] },
  modes: { otherModeIds?: readonly string[] } = {},
): boolean {
  const { toolCall, options } = request;
  if (rawInputPlan(toolCall)) return true;
  if (toolCall.kind === 'switch_mode') return true;
  const title = `${toolCall.title ?? ''} ${toolCall.name ?? ''}`;
  if (EXIT_PLAN_TITLE_PATTERN.test(title)) return true;
  if (options.some((option) => option.optionId === 'plan' || KEEP_PLANNING_PATTERN.test(option.name))) return true;
  const others = new Set(modes.otherModeIds ?? []);
  return options.some((option) => isAllow(option) && others.has(option.optionId));
}

/** Tool kinds whose request says what it does (a change, a command, …): no exit request hides there. */
const KNOWN_ACTION_KINDS: ReadonlySet<string> = new Set(['edit', 'delete', 'move', 'execute', 'read', 'search', 'think', 'fetch']);

/**
 * True when a permission request that is not a recognised plan exit could still be one: its kind
 * says nothing (`other`, or none). Refusing it silently could hide a plan from the person.
 */
export function isUnclearRequest(toolCall: Pick<ToolCallUpdate, 'kind'>, remembered?: string): boolean {
  const kind = toolCall.kind ?? remembered;
  return kind === undefined || kind === null || !KNOWN_ACTION_KINDS.has(kind);
}

export type OptionChoice = { ok: true; option: PermissionOption } | { ok: false; message: string };

function describeOptions(options: readonly PermissionOption[]): string {
  return options.length ? options.map((option) => `"${option.name}" (${option.optionId}, ${option.kind})`).join(', ') : 'none';
}

function isBypass(option: PermissionOption): boolean {
  return option.optionId === 'bypassPermissions' || BYPASS_PATTERN.test(option.optionId) || BYPASS_PATTERN.test(option.name);
}

function isAcceptEdits(option: PermissionOption): boolean {
  return option.optionId === 'acceptEdits' || ACCEPT_EDITS_PATTERN.test(option.optionId) || ACCEPT_EDITS_PATTERN.test(option.name);
}

function isSpecial(option: PermissionOption): boolean {
  return SPECIAL_PATTERN.test(option.optionId) || SPECIAL_PATTERN.test(option.name);
}

const isAllow = (option: PermissionOption): boolean => option.kind === 'allow_once' || option.kind === 'allow_always';
const isReject = (option: PermissionOption): boolean => option.kind === 'reject_once' || option.kind === 'reject_always';

/**
 * The option Approve selects. The request's own options decide: when none fits `afterApproval`,
 * the answer is an error that lists what the agent offered, never a guess.
 */
export function chooseApproveOption(agentLabel: string, options: readonly PermissionOption[], afterApproval: AfterApproval): OptionChoice {
  const allows = options.filter(isAllow);
  let chosen: PermissionOption | undefined;
  if (afterApproval === 'bypassPermissions') {
    chosen = allows.find((option) => isBypass(option) && !isSpecial(option)) ?? allows.find(isBypass);
  } else if (afterApproval === 'acceptEdits') {
    chosen = allows.find((option) => isAcceptEdits(option) && !isBypass(option) && !isSpecial(option));
  } else {
    chosen =
      allows.find((option) => option.optionId === 'default') ??
      allows.find(
        (option) =>
          (MANUAL_PATTERN.test(option.name) || MANUAL_PATTERN.test(option.optionId) || /-default$/.test(option.optionId)) &&
          !isBypass(option),
      );
    if (!chosen) {
      // A plain allow (Gemini's "Allow", Codex's "Yes"): one that neither bypasses, auto-accepts nor does more.
      const plain = allows.filter((option) => !isBypass(option) && !isAcceptEdits(option) && !isSpecial(option));
      chosen = plain.find((option) => option.kind === 'allow_once') ?? plain[0];
    }
  }
  if (chosen) return { ok: true, option: chosen };
  const wanted =
    afterApproval === 'bypassPermissions'
      ? 'an option that bypasses permissions'
      : afterApproval === 'acceptEdits'
        ? 'an option that auto-accepts edits'
        : 'an allow option that keeps approving edits manually';
  return {
    ok: false,
    message:
      `Approve needs ${wanted} (ultraplan.afterApproval = ${afterApproval}), but ${agentLabel} offered: ` +
      `${describeOptions(options)}. Change ultraplan.afterApproval and try again.`,
  };
}

/** The option Reject (and Teleport) selects: "keep planning" first, else a one-time reject. */
export function chooseRejectOption(agentLabel: string, options: readonly PermissionOption[]): OptionChoice {
  const chosen =
    options.find((option) => option.optionId === 'plan' || KEEP_PLANNING_PATTERN.test(option.name)) ??
    options.find((option) => option.kind === 'reject_once') ??
    options.find(isReject);
  if (chosen) return { ok: true, option: chosen };
  return { ok: false, message: `Reject needs a reject option, but ${agentLabel} offered: ${describeOptions(options)}.` };
}

/**
 * The options a person's answer to a tool permission (an edit, a command, after approval) selects.
 * Allow is one-time only: "always" would approve the next ones for the person. Deny prefers a
 * one-time reject; the plan-review "keep planning" choice never applies here.
 */
export function chooseToolAllowOption(agentLabel: string, options: readonly PermissionOption[]): OptionChoice {
  const chosen = options.find((option) => option.kind === 'allow_once' && !isBypass(option));
  if (chosen) return { ok: true, option: chosen };
  return {
    ok: false,
    message: `Allow needs a one-time allow option, but ${agentLabel} offered: ${describeOptions(options)}. Nothing was allowed.`,
  };
}

export function chooseToolRejectOption(agentLabel: string, options: readonly PermissionOption[]): OptionChoice {
  const chosen = options.find((option) => option.kind === 'reject_once') ?? options.find((option) => option.kind === 'reject_always');
  if (chosen) return { ok: true, option: chosen };
  return { ok: false, message: `Deny needs a reject option, but ${agentLabel} offered: ${describeOptions(options)}.` };
}

// ---------------------------------------------------------------------------------------------
// Plan review as an elicitation: one single-select question (Approve / Keep planning), free text open.

export interface PlanReviewForm {
  /** The property holding the choice. */
  choiceKey: string;
  approveValue: string;
  keepPlanningValue: string;
  /** A free-text property for feedback, if the form has one. */
  feedbackKey?: string;
  toolCallId?: string;
}

const APPROVE_CHOICE_PATTERN = /^(approve|yes|accept|proceed|implement)/i;
const KEEP_PLANNING_CHOICE_PATTERN = /keep.?planning|continue.?planning|revise|^no\b|^reject/i;

interface Choice {
  value: string;
  title: string;
}

function choicesOf(property: Record<string, unknown>): Choice[] {
  if (Array.isArray(property.oneOf)) {
    return (property.oneOf as unknown[])
      .filter(isRecord)
      .filter((entry) => typeof entry.const === 'string')
      .map((entry) => ({ value: entry.const as string, title: typeof entry.title === 'string' ? entry.title : (entry.const as string) }));
  }
  if (Array.isArray(property.enum)) {
    return (property.enum as unknown[])
      .filter((value): value is string => typeof value === 'string')
      .map((value) => ({ value, title: value }));
  }
  return [];
}

/** Reads an elicitation as a plan review, or answers undefined when it is some other question. */
export function planReviewForm(request: CreateElicitationRequest): PlanReviewForm | undefined {
  const record = request as unknown as Record<string, unknown>;
  if (record.mode !== 'form' || !isRecord(record.requestedSchema)) return undefined;
  const properties = record.requestedSchema.properties;
  if (!isRecord(properties)) return undefined;
  let form: PlanReviewForm | undefined;
  let feedbackKey: string | undefined;
  for (const [key, property] of Object.entries(properties)) {
    if (!isRecord(property) || property.type !== 'string') continue;
    const choices = choicesOf(property);
    if (choices.length === 0) {
      feedbackKey ??= key;
      continue;
    }
    const approve = choices.find((choice) => APPROVE_CHOICE_PATTERN.test(choice.title) || APPROVE_CHOICE_PATTERN.test(choice.value));
    const keep = choices.find(
      (choice) => KEEP_PLANNING_CHOICE_PATTERN.test(choice.title) || KEEP_PLANNING_CHOICE_PATTERN.test(choice.value),
    );
    if (approve && keep && !form) form = { choiceKey: key, approveValue: approve.value, keepPlanningValue: keep.value };
  }
  if (!form) return undefined;
  const toolCallId = typeof record.toolCallId === 'string' ? record.toolCallId : undefined;
  return { ...form, ...(feedbackKey ? { feedbackKey } : {}), ...(toolCallId ? { toolCallId } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Any other form elicitation is a question for the person (Claude's AskUserQuestion arrives so).

interface QuestionField {
  key: string;
  title: string;
  /** The property's title when it is itself a question. */
  question?: string;
  choices: Choice[];
  multi: boolean;
}

export interface QuestionForm {
  /** The question as text for the log: the message, then each field with its choices. */
  text: string;
  fields: QuestionField[];
}

function arrayChoices(property: Record<string, unknown>): Choice[] {
  const items = property.items;
  if (!isRecord(items)) return [];
  const list = Array.isArray(items.anyOf) ? items.anyOf : Array.isArray(items.oneOf) ? items.oneOf : undefined;
  if (list) return choicesOf({ oneOf: list });
  return choicesOf(items);
}

/** Reads a form elicitation as questions; undefined for a URL elicitation or an empty form. */
export function questionForm(request: CreateElicitationRequest): QuestionForm | undefined {
  const record = request as unknown as Record<string, unknown>;
  if (record.mode !== 'form' || !isRecord(record.requestedSchema) || !isRecord(record.requestedSchema.properties)) return undefined;
  const fields: QuestionField[] = [];
  for (const [key, property] of Object.entries(record.requestedSchema.properties)) {
    if (!isRecord(property)) continue;
    const title = [property.title, property.description].filter((part) => typeof part === 'string' && part).join(': ') || key;
    const question = typeof property.title === 'string' && /\?\s*$/.test(property.title) ? { question: property.title } : {};
    if (property.type === 'string') fields.push({ key, title, choices: choicesOf(property), multi: false, ...question });
    else if (property.type === 'array') fields.push({ key, title, choices: arrayChoices(property), multi: true });
  }
  if (fields.length === 0) return undefined;
  const lines = [typeof record.message === 'string' ? record.message : ''];
  const selects = fields.filter((field) => field.choices.length > 0);
  for (const field of selects) {
    if (selects.length > 1) lines.push('', field.title);
    // A field titled with a question of its own (Codex's, under the message "Codex needs your input to continue.").
    else if (field.question && !lines[0]?.includes(field.question)) lines.push('', field.question);
    for (const choice of field.choices) lines.push(`- ${choice.title}`);
  }
  return { text: lines.join('\n').trim(), fields };
}

/**
 * The form answer for a person's free-text reply: a choice it names is picked; the text itself
 * goes to the first free-text field (the "Other" answer), or to the first field when there is none.
 */
export function answerQuestion(form: QuestionForm, reply: string): Record<string, string | string[]> {
  const text = reply.trim();
  const content: Record<string, string | string[]> = {};
  const selects = form.fields.filter((field) => field.choices.length > 0);
  const free = form.fields.find((field) => field.choices.length === 0 && !field.multi);
  let picked = false;
  for (const field of selects) {
    const choice = field.choices.find(
      (candidate) => candidate.title.toLowerCase() === text.toLowerCase() || candidate.value.toLowerCase() === text.toLowerCase(),
    );
    if (choice) {
      content[field.key] = field.multi ? [choice.value] : choice.value;
      picked = true;
      break;
    }
  }
  if (!picked) {
    const target = free ?? form.fields[0];
    if (target) content[target.key] = target.multi ? [text] : text;
  }
  return content;
}
