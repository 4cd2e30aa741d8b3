// Reject feedback as the agent receives it: the person's text, then each line comment with the
// plan lines it is about quoted above it, so the agent sees what the comment refers to even
// though it never saw our panel. Pure.

/** A comment on plan lines `startLine..endLine` (1-based, inclusive) of one revision. */
export interface PlanLineComment {
  startLine: number;
  endLine: number;
  text: string;
}

/** When the person rejects without writing anything, the agent still needs a usable message. */
export const EMPTY_REJECT_FEEDBACK = 'The reviewer rejected this plan without comments. Please revise it.';

/** The quoted plan lines of a comment ("> " each; a blank line as ">"). Out-of-range lines are clamped. */
export function quotePlanLines(plan: string, startLine: number, endLine: number): string {
  const lines = plan.split(/\r?\n/);
  const first = Math.max(1, Math.min(startLine, endLine));
  const last = Math.min(lines.length, Math.max(startLine, endLine));
  const quoted: string[] = [];
  for (let n = first; n <= last; n++) {
    const line = (lines[n - 1] ?? '').trimEnd();
    quoted.push(line.length > 0 ? `> ${line}` : '>');
  }
  return quoted.join('\n');
}

function lineLabel(c: PlanLineComment): string {
  const a = Math.min(c.startLine, c.endLine);
  const b = Math.max(c.startLine, c.endLine);
  return a === b ? `line ${a}` : `lines ${a}-${b}`;
}

/**
 * The deny message for a rejection: feedback text, then "Comments on specific plan lines:" with
 * each comment as its quoted lines followed by the comment. Comments with blank text are dropped
 * (an empty comment box is not feedback); comments are ordered by line.
 */
export function formatRejectFeedback(plan: string, feedback: string, comments: readonly PlanLineComment[]): string {
  const parts: string[] = [];
  const text = feedback.trim();
  if (text.length > 0) parts.push(text);
  const useful = comments
    .filter((c) => c.text.trim().length > 0)
    .slice()
    .sort((a, b) => a.startLine - b.startLine || a.endLine - b.endLine);
  if (useful.length > 0) {
    const blocks = useful.map((c) => {
      const quote = quotePlanLines(plan, c.startLine, c.endLine);
      const head = `On plan ${lineLabel(c)}:`;
      return quote.length > 0 ? `${head}\n${quote}\n\n${c.text.trim()}` : `${head}\n${c.text.trim()}`;
    });
    parts.push(`Comments on specific plan lines:\n\n${blocks.join('\n\n')}`);
  }
  return parts.length > 0 ? parts.join('\n\n') : EMPTY_REJECT_FEEDBACK;
}
