// What the fleet's agents are asked. The reply shapes are spelled out exactly as finding.ts parses
// them, so a reply either fits or fails loudly.
import type { FinderFinding } from './finding';
import { SEVERITIES } from './finding';

export function finderPrompt(scopeText: string, diff: string): string {
  return [
    `Review this code change (${scopeText}) for bugs, security problems and mistakes a careful reviewer would flag.`,
    'You are a read-only reviewer: read any file of the workspace you need, change nothing, and do not propose a plan.',
    'Report only problems in the changed code, each on the lines of the new version of its file.',
    '',
    'Reply with exactly one JSON block, nothing else required, in this shape:',
    '```json',
    '{"findings": [{"file": "path/from/repo/root", "startLine": 1, "endLine": 1,',
    `  "severity": "${SEVERITIES.join('" | "')}", "title": "one line", "explanation": "why it is wrong",`,
    '  "suggestedChange": "optional: the replacement code"}]}',
    '```',
    'An empty list is the right answer when you find nothing.',
    '',
    'The change:',
    '```diff',
    diff,
    '```',
  ].join('\n');
}

/** How a verifier answers (finding.ts VerdictReplySchema), shared by every verifier prompt. */
export const VERDICT_REPLY: readonly string[] = [
  'Reply with exactly one JSON block:',
  '```json',
  '{"verdict": "confirmed" | "refuted", "reason": "one or two sentences"}',
  '```',
];

export function verifierPrompt(finding: FinderFinding): string {
  return [
    'Another reviewer reported this problem in the working tree. Check it against the code: read the file, and',
    'confirm it only when the problem is real in the code as it is now; refute it when it is wrong or already handled.',
    'Change nothing and do not propose a plan.',
    '',
    `File: ${finding.file}, lines ${finding.startLine}-${finding.endLine}`,
    `Severity: ${finding.severity}`,
    `Title: ${finding.title}`,
    `Explanation: ${finding.explanation}`,
    '',
    ...VERDICT_REPLY,
  ].join('\n');
}

/** The task a Fix starts: a normal planning session about this one finding. */
export function fixPrompt(
  finding: Pick<FinderFinding, 'file' | 'startLine' | 'endLine' | 'title' | 'explanation' | 'suggestedChange'>,
): string {
  return [
    `Fix this review finding in ${finding.file} (lines ${finding.startLine}-${finding.endLine}): ${finding.title}`,
    '',
    finding.explanation,
    ...(finding.suggestedChange ? ['', 'The reviewer suggested:', '```', finding.suggestedChange, '```'] : []),
  ].join('\n');
}
