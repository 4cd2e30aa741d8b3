// A line diff between two plan revisions, rendered as escaped text (textContent only: the plans are
// untrusted and a diff is read as source, not as rendered markdown).
import { diffLines } from 'diff';

/** Beyond this many changed lines the diff is not worth computing (and Myers' cost grows with it). */
const MAX_EDIT_LENGTH = 20_000;

export interface PlanDiffSummary {
  added: number;
  removed: number;
}

export type PlanDiffResult = { ok: true; element: HTMLElement; summary: PlanDiffSummary } | { ok: false; reason: string };

function splitLines(value: string): string[] {
  const lines = value.split('\n');
  // diffLines keeps each line's newline; the last element after a trailing newline is empty.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function renderPlanDiff(previous: string, current: string, labels: { from: string; to: string }): PlanDiffResult {
  const changes = diffLines(previous, current, { maxEditLength: MAX_EDIT_LENGTH });
  if (!changes) return { ok: false, reason: `The two revisions differ in more than ${MAX_EDIT_LENGTH} lines; no line diff is shown.` };
  const element = document.createElement('div');
  element.className = 'plan-diff';
  element.setAttribute('role', 'region');
  element.setAttribute('aria-label', `Changes from ${labels.from} to ${labels.to}`);
  const summary: PlanDiffSummary = { added: 0, removed: 0 };
  const body = document.createDocumentFragment();
  for (const change of changes) {
    const kind = change.added ? 'added' : change.removed ? 'removed' : 'context';
    const prefix = change.added ? '+ ' : change.removed ? '- ' : '  ';
    for (const line of splitLines(change.value)) {
      const row = document.createElement('div');
      row.className = `diff-line diff-${kind}`;
      row.textContent = prefix + line;
      body.appendChild(row);
      if (change.added) summary.added++;
      else if (change.removed) summary.removed++;
    }
  }
  const header = document.createElement('p');
  header.className = 'diff-summary';
  header.textContent = `${labels.from} → ${labels.to}: ${summary.added} line${summary.added === 1 ? '' : 's'} added, ${summary.removed} removed`;
  element.append(header, body);
  return { ok: true, element, summary };
}
