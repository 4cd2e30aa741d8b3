// The front matter a saved plan carries, so the file says where it came from and editors that
// list plans read it: `name`, `overview` and `todos` (id, content, status) as Cursor's `.plan.md`
// files have them, and our own facts under `ultraplan:` (session, revision, the plan's SHA-256,
// agent, backend, what was decided and when). Pure; the extension loads it (with the steps'
// reader, markdown-it) as a chunk of its own when a plan is first saved.
import { readPlanSteps, type PlanOutline } from './execution/steps';

export interface SavedPlanFacts {
  sessionId: string;
  /** The revision's number in its session, when known. */
  revision?: number;
  /** SHA-256 hex of the plan text exactly as the person saw it (core/decision.ts planHash). */
  planHash: string;
  agent?: string;
  backend: string;
  decision: 'teleported' | 'approved';
  /** Who decided, when the backend knows (a signed-in team server). */
  decidedBy?: string;
  /** ISO 8601. */
  decidedAt: string;
}

const MAX_TODOS = 200;
const MAX_FIELD = 500;

/** A YAML double-quoted scalar: JSON's string syntax is a subset of YAML 1.2's. */
function quoted(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > MAX_FIELD ? `${flat.slice(0, MAX_FIELD - 1)}…` : flat);
}

/** The plan as a file: front matter, a blank line, then the plan text unchanged. */
export function planFileText(plan: string, facts: SavedPlanFacts, outline?: PlanOutline): string {
  const body = plan.endsWith('\n') ? plan : `${plan}\n`;
  const lines = ['---'];
  const name =
    outline?.title ??
    plan
      .split(/\r?\n/)
      .find((l) => l.trim() !== '')
      ?.replace(/^#+\s*/, '');
  if (name) lines.push(`name: ${quoted(name)}`);
  const revision = facts.revision !== undefined ? `revision ${facts.revision} ` : '';
  lines.push(`overview: ${quoted(`Plan ${revision}of Ultraplan session ${facts.sessionId}, ${facts.decision} on ${facts.decidedAt}.`)}`);
  const steps = outline?.steps.slice(0, MAX_TODOS) ?? [];
  if (steps.length > 0) {
    lines.push('todos:');
    for (const step of steps) {
      lines.push(
        `  - id: ${quoted(step.id)}`,
        `    content: ${quoted(step.title)}`,
        `    status: ${step.checked ? 'completed' : 'pending'}`,
      );
    }
  }
  lines.push('ultraplan:', `  session: ${quoted(facts.sessionId)}`);
  if (facts.revision !== undefined) lines.push(`  revision: ${facts.revision}`);
  lines.push(`  planHash: ${quoted(`sha256:${facts.planHash}`)}`);
  if (facts.agent) lines.push(`  agent: ${quoted(facts.agent)}`);
  lines.push(`  backend: ${quoted(facts.backend)}`, `  decision: ${facts.decision}`);
  if (facts.decidedBy) lines.push(`  decidedBy: ${quoted(facts.decidedBy)}`);
  lines.push(`  decidedAt: ${quoted(facts.decidedAt)}`, '---', '');
  return `${lines.join('\n')}\n${body}`;
}

/** The plan as a file, its steps read from it. */
export function savedPlanText(plan: string, facts: SavedPlanFacts): string {
  return planFileText(plan, facts, readPlanSteps(plan));
}
