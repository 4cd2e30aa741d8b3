// What an approved Claude Code on the web session reports at its end: the pull request it opened
// and the branch it pushed, found in its own words (the result and its last message) and in the
// session's outcomes. Only what is found is reported, each with where it was found. Pure.
import * as z from 'zod';

export interface ExecutionReport {
  /** https://<host>/<owner>/<repo>/pull/<n>, in order of appearance, without duplicates. */
  pullRequests: string[];
  /** Branch names with where they were found. */
  branches: Array<{ name: string; from: 'text' | 'session' }>;
}

// A pull request link as GitHub writes it; stops at the number (no trailing punctuation or #anchor).
const PULL_REQUEST = /https:\/\/(?:www\.)?github\.com\/[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}\/pull\/\d{1,9}\b/g;
// Claude Code names its branches claude/<slug>; a name ends at whitespace, a quote or a backtick,
// and sentence punctuation at its end is not part of it.
const CLAUDE_BRANCH = /(?<![\w/.-])claude\/[A-Za-z0-9._/-]{1,200}/g;

const OutcomeSchema = z.looseObject({
  type: z.string(),
  git_info: z.looseObject({ branches: z.array(z.string()).optional() }).optional(),
});

/** Branch names in the session resource's session_context.outcomes (git_repository entries). */
export function outcomeBranches(sessionContext: unknown): string[] {
  const outcomes = z.looseObject({ outcomes: z.array(z.unknown()).optional() }).safeParse(sessionContext);
  if (!outcomes.success) return [];
  const names: string[] = [];
  for (const raw of outcomes.data.outcomes ?? []) {
    const o = OutcomeSchema.safeParse(raw);
    if (!o.success || o.data.type !== 'git_repository') continue;
    for (const b of o.data.git_info?.branches ?? []) if (b.trim()) names.push(b.trim());
  }
  return names;
}

export function findExecutionReport(texts: ReadonlyArray<string | null | undefined>, sessionContext?: unknown): ExecutionReport {
  const pullRequests: string[] = [];
  const branches: ExecutionReport['branches'] = [];
  const seenBranch = new Set<string>();
  for (const text of texts) {
    if (!text) continue;
    for (const m of text.matchAll(PULL_REQUEST)) if (!pullRequests.includes(m[0])) pullRequests.push(m[0]);
    for (const m of text.matchAll(CLAUDE_BRANCH)) {
      const name = m[0].replace(/[.,;:!?)/-]+$/, '');
      if (name.length <= 'claude/'.length || seenBranch.has(name)) continue;
      seenBranch.add(name);
      branches.push({ name, from: 'text' });
    }
  }
  for (const name of outcomeBranches(sessionContext)) {
    if (seenBranch.has(name)) continue;
    seenBranch.add(name);
    branches.push({ name, from: 'session' });
  }
  return { pullRequests, branches };
}

/** One line for people, or undefined when the session reported neither. */
export function describeExecutionReport(report: ExecutionReport): string | undefined {
  const parts: string[] = [];
  if (report.pullRequests.length > 0) parts.push(`Pull request: ${report.pullRequests.join(', ')}.`);
  const said = report.branches.filter((b) => b.from === 'text').map((b) => b.name);
  const session = report.branches.filter((b) => b.from === 'session').map((b) => b.name);
  if (said.length > 0) parts.push(`Branch: ${said.join(', ')}.`);
  // The outcome branch is the one the launch asked for; it only says something when the session
  // itself named neither a pull request nor a branch.
  else if (session.length > 0 && report.pullRequests.length === 0) parts.push(`Branch (the session's outcome): ${session.join(', ')}.`);
  return parts.length > 0 ? parts.join(' ') : undefined;
}
