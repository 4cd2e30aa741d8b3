// Where a finding's lines are now. A thread remembers the code it was raised on; when the file
// changes, the same lines are looked for (nearest to the old place) and the thread moves there, or
// is marked outdated when they are gone. Dismissals use the same remembered code, so the next
// review of unchanged code does not raise a dismissed finding again.
import { textSimilarity } from './merge';

/** The code a finding points at: its lines, trimmed at the end, at most this many. */
const MAX_ANCHOR_LINES = 40;

export function anchorLines(fileLines: readonly string[], startLine: number, endLine: number): string[] {
  const end = Math.min(endLine, startLine + MAX_ANCHOR_LINES - 1, fileLines.length);
  return fileLines.slice(startLine - 1, end).map((line) => line.trimEnd());
}

export type Reanchored = { kind: 'at'; startLine: number; endLine: number } | { kind: 'outdated' };

/** Finds `anchor` in `fileLines`, preferring the place nearest `startLine` (1-based). */
export function reanchor(anchor: readonly string[], startLine: number, fileLines: readonly string[]): Reanchored {
  if (anchor.length === 0 || anchor.every((line) => line.trim() === '')) return { kind: 'outdated' };
  const lines = fileLines.map((line) => line.trimEnd());
  let best: number | undefined;
  for (let i = 0; i + anchor.length <= lines.length; i++) {
    if (lines[i] !== anchor[0]) continue;
    let same = true;
    for (let k = 1; k < anchor.length && same; k++) same = lines[i + k] === anchor[k];
    if (same && (best === undefined || Math.abs(i + 1 - startLine) < Math.abs(best + 1 - startLine))) best = i;
  }
  if (best === undefined) return { kind: 'outdated' };
  return { kind: 'at', startLine: best + 1, endLine: best + anchor.length };
}

export interface Dismissal {
  file: string;
  title: string;
  /** The code the finding was raised on (anchorLines). */
  code: string[];
  reason: string;
  /** ISO time. */
  at: string;
}

/** Same file, same code, and the same problem told in similar words. */
export function isDismissed(
  finding: { file: string; title: string },
  code: readonly string[],
  dismissals: readonly Dismissal[],
): Dismissal | undefined {
  const text = code.join('\n');
  return dismissals.find((d) => d.file === finding.file && d.code.join('\n') === text && textSimilarity(d.title, finding.title) >= 0.3);
}
