// A session that starts from a plan written by any tool (Copilot's `.copilot/plans`, Cursor's
// `.cursor/plans`, Claude Code's `~/.claude/plans`, a saved `*.plan.md`): the creation request
// carries the plan and its SHA-256 (`plan_file`), and the session host writes the plan into the
// log as an ExitPlanMode request of its own, waiting for a decision, before any agent runs. So
// the review is the one every session has (line comments, edits, the binding to the plan's hash),
// and the decision starts the agent: Approve a turn that carries the plan out (its approval in
// the log, so the checklist, the record of changes and verification apply), Reject one that
// revises it in plan mode from the feedback. docs/plans-on-disk.md. Pure.
import * as z from 'zod';
import { planHash } from './decision';
import { EXIT_PLAN_MODE_TOOL } from './protocolMarkers';
import { setPlanModeEvent, userMessageEvent, type CreateSessionRequest } from './protocol';

/** The creation request's field that carries the plan. */
export const PLAN_FILE_FIELD = 'plan_file';
/** The `system` event subtype the host writes first: where the plan came from, and its hash. */
export const PLAN_FILE_SUBTYPE = 'ultraplan_plan_file';
/** Marks the host's ExitPlanMode request (and its tool use) as the file's, not an agent's. */
export const PLAN_FILE_MARK = 'ultraplan_plan_file';

/** A plan larger than this is no plan a person reviews line by line (and no prompt an agent takes whole). */
export const MAX_PLAN_FILE_CHARS = 256 * 1024;
const MAX_SOURCE_CHARS = 500;

export const PlanFileSchema = z.strictObject({
  /** The plan text as the person saw it (front matter removed). */
  plan: z
    .string()
    .max(MAX_PLAN_FILE_CHARS)
    .refine((text) => text.trim().length > 0, 'the plan is empty'),
  /** Hex SHA-256 of `plan` (core/decision.ts planHash): the host refuses a plan that is not this one. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 is 64 lower-case hex digits'),
  /** Where it was read, for people: "~/.claude/plans/quiet-fox.md", ".cursor/plans/x.plan.md". */
  source: z.string().trim().min(1).max(MAX_SOURCE_CHARS),
});
export type PlanFile = z.infer<typeof PlanFileSchema>;

/** The plan with its hash: what the extension sends. */
export function planFileOf(plan: string, source: string): PlanFile {
  return { plan, sha256: planHash(plan), source };
}

/** Why a request's `plan_file` cannot be taken (undefined: there is none). Throws nothing. */
export function readPlanFileField(raw: unknown): { ok: true; planFile: PlanFile | undefined } | { ok: false; reason: string } {
  if (raw === undefined) return { ok: true, planFile: undefined };
  const parsed = PlanFileSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, reason: `${PLAN_FILE_FIELD}: ${z.prettifyError(parsed.error).replace(/\s*\n\s*/g, '; ')}` };
  }
  if (planHash(parsed.data.plan) !== parsed.data.sha256) {
    return {
      ok: false,
      reason: `${PLAN_FILE_FIELD}: sha256 is not the SHA-256 of the plan sent (the plan the person reviewed is not the plan that arrived)`,
    };
  }
  return { ok: true, planFile: parsed.data };
}

/** The first prompt: what the log says the person asked (the recap of a later turn starts with it). */
export function planFilePrompt(source: string): string {
  return `Review the plan in ${source}, then carry it out or revise it.`;
}

/** The creation request of a session that starts from `planFile`, in plan mode until it is approved. */
export function planFileSessionRequest(planFile: PlanFile, title: string, newId: () => string): CreateSessionRequest {
  return {
    title,
    events: [
      { type: 'event', data: setPlanModeEvent(`set-mode-${newId()}`) },
      { type: 'event', data: userMessageEvent(planFilePrompt(planFile.source)) },
    ],
    [PLAN_FILE_FIELD]: planFile,
  };
}

type HostEvent = Record<string, unknown> & { type: string };

/**
 * What the host writes after the creation's own events: where the plan came from, then the plan
 * as an ExitPlanMode call and its can_use_tool request (in the shape the agents' are written), each
 * marked as the file's. `ids` are the tool use's and the request's.
 */
export function planFileEvents(planFile: PlanFile, ids: { toolUseId: string; requestId: string }): HostEvent[] {
  const { plan, source, sha256 } = planFile;
  const input = { plan };
  return [
    {
      type: 'system',
      subtype: PLAN_FILE_SUBTYPE,
      source,
      plan_hash: sha256,
      message: `The plan below was read from ${source}; no agent runs until it is decided. Approve starts an agent that carries it out; Reject with comments starts one that revises it.`,
    },
    {
      type: 'assistant',
      parent_tool_use_id: null,
      [PLAN_FILE_MARK]: source,
      message: { role: 'assistant', content: [{ type: 'tool_use', id: ids.toolUseId, name: EXIT_PLAN_MODE_TOOL, input }] },
    },
    {
      type: 'control_request',
      request_id: ids.requestId,
      [PLAN_FILE_MARK]: source,
      request: { subtype: 'can_use_tool', tool_name: EXIT_PLAN_MODE_TOOL, input, tool_use_id: ids.toolUseId },
    },
  ];
}

/** The source a control_request of the host's names, when it is a plan file's. */
export function planFileSourceOf(event: Readonly<Record<string, unknown>>): string | undefined {
  const source = event[PLAN_FILE_MARK];
  return typeof source === 'string' && source.length > 0 ? source : undefined;
}

/** The first agent turn after Approve: out of plan mode, carrying the plan out. */
export function planFileCarryOutPrompt(plan: string, source: string): string {
  return `The reviewer approved the plan below (written in ${source}, reviewed here). Carry it out now. Some steps may already be done in the workspace: check before you change anything.\n\nThe approved plan:\n\n${plan}`;
}

/** The first agent turn after Reject: in plan mode, revising the plan from the feedback. */
export function planFileRevisePrompt(plan: string, feedback: string, source: string): string {
  return `The reviewer rejected the plan below (written in ${source}). Their feedback:\n\n${feedback}\n\nThe plan:\n\n${plan}\n\nStay in plan mode: read what you need in the workspace, revise the plan so it answers the feedback, and propose the revised plan when it is ready.`;
}
