// Claude Code's own review (`claude ultrareview --json`, 2.1.332) mapped into our findings. What it
// prints, read from its client (docs/review.md "Claude Code's review"): on stdout, the review's
// bugs.json payload, either an array of findings {file_path, start_line, end_line, severity:
// normal | nit | pre_existing, pr_comment, reasoning} (every field may be missing; an empty array
// is a completed review with no findings) or an object {error, reason?} with exit code 1. A run
// that never produced a payload (not logged in, launch refused, timeout) exits 1 with its reason on
// stderr only.
import * as z from 'zod';
import type { RawFinding } from './merge';
import type { Severity } from './finding';

export const CLAUDE_REVIEWER = 'Claude Code ultrareview';

/** Said before Claude Code's review starts: it is not free. */
export const CLAUDE_BILLING_NOTICE =
  "Claude Code's review runs in Anthropic's cloud. After your free runs, Anthropic bills each review as extra usage.";

const ClaudeBugSchema = z.looseObject({
  file_path: z.string().optional(),
  start_line: z.number().int().optional(),
  end_line: z.number().int().optional(),
  severity: z.string().optional(),
  pr_comment: z.string().optional(),
  reasoning: z.string().optional(),
});
const ClaudeBugsSchema = z.array(ClaudeBugSchema);
const ClaudeErrorSchema = z.looseObject({ error: z.string(), reason: z.string().optional() });

const SEVERITY: Readonly<Record<string, Severity>> = { normal: 'major', nit: 'nit', pre_existing: 'minor' };

export type ClaudeReviewResult = { ok: true; findings: RawFinding[] } | { ok: false; error: string };

/** Maps the run's stdout, stderr and exit code. */
export function mapClaudeReview(stdout: string, stderr: string, exitCode: number | null): ClaudeReviewResult {
  let payload: unknown;
  try {
    payload = JSON.parse(stdout.trim());
  } catch {
    payload = undefined;
  }
  const failure = ClaudeErrorSchema.safeParse(payload);
  if (failure.success) {
    return { ok: false, error: failure.data.reason === 'stopped' ? `the review was stopped: ${failure.data.error}` : failure.data.error };
  }
  const bugs = ClaudeBugsSchema.safeParse(payload);
  if (exitCode !== 0 || !bugs.success) {
    const said = lastLines(stderr) || lastLines(stdout);
    return { ok: false, error: `claude ultrareview exited with ${exitCode ?? 'a signal'}${said ? `: ${said}` : ''}` };
  }
  const findings: RawFinding[] = [];
  bugs.data.forEach((bug, i) => {
    if (!bug.file_path) return;
    const start = Math.max(1, bug.start_line ?? 1);
    const comment = (bug.pr_comment ?? '').trim();
    // Claude's own terminal view: the comment's first line is its headline, the rest its body.
    const newline = comment.indexOf('\n');
    const title = (newline === -1 ? comment : comment.slice(0, newline)).trim() || 'Finding';
    const body = newline === -1 ? '' : comment.slice(newline + 1).trim();
    findings.push({
      id: `c${i + 1}`,
      file: bug.file_path,
      startLine: start,
      endLine: Math.max(start, bug.end_line ?? start),
      severity: SEVERITY[bug.severity ?? 'normal'] ?? 'major',
      title: title.slice(0, 300),
      explanation: [body, bug.reasoning?.trim()].filter(Boolean).join('\n\n') || title,
      foundBy: CLAUDE_REVIEWER,
      // Claude's review verifies its findings in the cloud before it prints them.
      verdict: { by: CLAUDE_REVIEWER, verdict: 'confirmed', reason: 'verified by Claude Code before reporting' },
    });
  });
  return { ok: true, findings };
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' ').trim().slice(0, 500);
}
