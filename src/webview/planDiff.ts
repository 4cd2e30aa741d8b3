// A line diff between two plan revisions, rendered as escaped text (textContent only: the plans are
// untrusted and a diff is read as source, not as rendered markdown).
import { diffLines } from 'diff';

/** Beyond this many changed lines the diff is not worth computing (and Myers' cost grows with it). */
export const MAX_DIFF_EDIT_LENGTH = 4_000;
/** The diff gives up after this long, whatever its size: the panel must stay responsive. */
export const DIFF_TIMEOUT_MS = 500;

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
  const changes = diffLines(previous, current, { maxEditLength: MAX_DIFF_EDIT_LENGTH, timeout: DIFF_TIMEOUT_MS });
  if (!changes) {
    return {
      ok: false,
      reason:
        `The changes from ${labels.from} to ${labels.to} are too large to show as a line diff (more than ` +
        `${MAX_DIFF_EDIT_LENGTH.toLocaleString('en-US')} changed lines, or longer than ${DIFF_TIMEOUT_MS} ms to compute), ` +
        `so ${labels.to} is shown as plain text.`,
    };
  }
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
