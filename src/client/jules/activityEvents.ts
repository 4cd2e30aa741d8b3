// Jules's activities as the session events every other backend speaks (docs/protocol.md), so the
// scanner, the model and the panel read a Jules session like any other. Pure and deterministic:
// the same activities in the same order give the same events with the same ids, so a reload that
// reads the activities again resumes at the same cursor.
//
//   planGenerated     → an ExitPlanMode tool_use with the plan as markdown, and the can_use_tool
//                       request its decision answers (a plan still waiting is superseded first)
//   planApproved      → the tool_result that approves it (also when approved in Jules's web app
//                       or by its own timer)
//   userMessaged      → while a plan waits: the tool_result that rejects it, the message as the
//                       feedback (Jules has no reject: a message is how a plan is sent back);
//                       otherwise the user's message
//   agentMessaged     → the agent's text (its question, when the session awaits feedback)
//   progressUpdated   → the agent's text, and each file its change set touches as a progress fact
//   sessionCompleted  → a success result; sessionFailed → an error result with its reason
import { planHash } from '../../core/decision';
import { progressEvent } from '../../core/execution/progress';
import { APPROVED_PLAN_MARKER, EXIT_PLAN_MODE_TOOL, type AnyEvent } from '../../core/protocol';
import { JulesActivitySchema, type JulesActivity, type JulesArtifact, type JulesPlan } from './schemas';

export const SUPERSEDED_FEEDBACK = 'Jules proposed a revised plan; this one was not approved.';

interface ProposedPlan {
  toolUseId: string;
  requestId: string;
  planId: string;
  plan: string;
}

/** A plan's steps as the markdown the panel shows and the checklist reads. */
export function planMarkdown(plan: JulesPlan): string {
  const steps = [...(plan.steps ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const lines = ["# Jules's plan", ''];
  if (steps.length === 0) lines.push('_Jules proposed a plan with no steps._');
  steps.forEach((step, i) => {
    const title = (step.title ?? '').trim() || `Step ${i + 1}`;
    lines.push(`${i + 1}. ${title.replace(/\s*\n\s*/g, ' ')}`);
    const description = (step.description ?? '').trim();
    if (description) lines.push('', ...description.split('\n').map((line) => (line.trim() ? `   ${line}` : '')), '');
  });
  return `${lines.join('\n').trimEnd()}\n`;
}

/** Paths a unified diff changes (its `+++ b/…` lines; a deletion's `--- a/…`). */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  let deleted: string | undefined;
  for (const line of patch.split('\n')) {
    if (line.startsWith('--- ')) deleted = line.slice(4).trim().replace(/^a\//, '');
    else if (line.startsWith('+++ ')) {
      const target = line.slice(4).trim();
      const path = target === '/dev/null' ? deleted : target.replace(/^b\//, '');
      if (path && path !== '/dev/null') paths.add(path.split('\t')[0]!);
    }
  }
  return [...paths];
}

function text(role: 'assistant', id: string, body: string): AnyEvent {
  return { type: role, id, parent_tool_use_id: null, message: { role, content: [{ type: 'text', text: body }] } };
}

function toolResult(id: string, toolUseId: string, content: string, isError: boolean): AnyEvent {
  return {
    type: 'user',
    id,
    parent_tool_use_id: null,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content, is_error: isError }] },
  };
}

/** Folds activities, in the order the API lists them, into events. */
export class ActivityEvents {
  readonly events: AnyEvent[] = [];
  #seen = new Set<string>();
  #pending: ProposedPlan | undefined;
  /** The approved plan's text: progress facts are bound to its hash. */
  #approved: string | undefined;
  readonly #byPlanId = new Map<string, ProposedPlan>();
  readonly #byRequestId = new Map<string, ProposedPlan>();
  #malformed = 0;
  #seq = 0;

  /** Activities skipped because they are not what the reference describes. */
  get malformed(): number {
    return this.#malformed;
  }

  /** The plan a can_use_tool request of these events proposed. */
  planFor(requestId: string): ProposedPlan | undefined {
    return this.#byRequestId.get(requestId);
  }

  /** The plan waiting for a decision, if any. */
  get pending(): ProposedPlan | undefined {
    return this.#pending;
  }

  /** Takes one raw activity; returns whether it was new. */
  add(raw: unknown): boolean {
    const parsed = JulesActivitySchema.safeParse(raw);
    if (!parsed.success) {
      this.#malformed++;
      return false;
    }
    const activity = parsed.data;
    if (this.#seen.has(activity.id)) return false;
    this.#seen.add(activity.id);
    this.#map(activity);
    return true;
  }

  #push(...events: AnyEvent[]): void {
    this.events.push(...events);
  }

  #map(a: JulesActivity): void {
    const id = `jules:${a.id}`;
    if (a.planGenerated) {
      this.#supersede(`${id}:superseded`);
      const plan = planMarkdown(a.planGenerated.plan);
      const proposed: ProposedPlan = { toolUseId: `${id}:plan`, requestId: `${id}:request`, planId: a.planGenerated.plan.id, plan };
      this.#pending = proposed;
      this.#byPlanId.set(proposed.planId, proposed);
      this.#byRequestId.set(proposed.requestId, proposed);
      this.#push(
        {
          type: 'assistant',
          id,
          parent_tool_use_id: null,
          message: {
            role: 'assistant',
            content: [{ type: 'tool_use', id: proposed.toolUseId, name: EXIT_PLAN_MODE_TOOL, input: { plan } }],
          },
        },
        {
          type: 'control_request',
          id: `${id}:request`,
          request_id: proposed.requestId,
          request: { subtype: 'can_use_tool', tool_name: EXIT_PLAN_MODE_TOOL, input: { plan }, tool_use_id: proposed.toolUseId },
        },
      );
    } else if (a.planApproved) {
      const proposed = this.#byPlanId.get(a.planApproved.planId);
      if (proposed && this.#pending === proposed) {
        this.#pending = undefined;
        this.#approved = proposed.plan;
        this.#push(toolResult(id, proposed.toolUseId, `${APPROVED_PLAN_MARKER}${proposed.plan}`, false));
      }
    } else if (a.userMessaged) {
      const message = a.userMessaged.userMessage ?? '';
      if (this.#pending) {
        this.#push(toolResult(id, this.#pending.toolUseId, message, true));
        this.#pending = undefined;
      } else if (message) {
        this.#push({ type: 'user', id, parent_tool_use_id: null, message: { role: 'user', content: message } });
      }
    } else if (a.agentMessaged) {
      if (a.agentMessaged.agentMessage) this.#push(text('assistant', id, a.agentMessaged.agentMessage));
    } else if (a.progressUpdated) {
      const { title, description } = a.progressUpdated;
      const body = [title?.trim(), description?.trim()].filter(Boolean).join('\n\n');
      if (body) this.#push(text('assistant', id, body));
      this.#files(id, a);
    } else if (a.sessionCompleted) {
      this.#files(id, a);
      this.#push({ type: 'result', id, subtype: 'success', is_error: false, result: 'Jules completed the session.' });
    } else if (a.sessionFailed) {
      const reason = a.sessionFailed.reason?.trim() || 'Jules did not say why.';
      this.#push({ type: 'result', id, subtype: 'error_during_execution', is_error: true, errors: [reason], result: reason });
    }
  }

  /** A plan still waiting when Jules proposes another was not approved: say so before the new one. */
  #supersede(id: string): void {
    if (!this.#pending) return;
    this.#push(toolResult(id, this.#pending.toolUseId, SUPERSEDED_FEEDBACK, true));
    this.#pending = undefined;
  }

  #files(id: string, a: JulesActivity): void {
    if (this.#approved === undefined) return;
    const hash = planHash(this.#approved);
    const at =
      a.createTime && !Number.isNaN(Date.parse(a.createTime))
        ? new Date(Date.parse(a.createTime)).toISOString()
        : new Date(0).toISOString();
    const paths = new Set(
      (a.artifacts ?? []).flatMap((artifact: JulesArtifact) => patchPaths(artifact.changeSet?.gitPatch?.unidiffPatch ?? '')),
    );
    let n = 0;
    for (const path of paths) {
      const fact = progressEvent(hash, { kind: 'file_touched', seq: this.#seq++, at, path, tool: 'Jules' });
      this.#push({ ...fact, id: `${id}:file:${n++}` });
    }
  }
}
