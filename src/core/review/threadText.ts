// The words of a finding's thread (and of Copy), shared by every surface that shows one.
import { verificationLabel, type ReviewFinding } from './merge';

export function threadLabel(finding: Pick<ReviewFinding, 'severity' | 'title'>, outdated: boolean): string {
  return `${outdated ? '(outdated) ' : ''}[${finding.severity}] ${finding.title}`;
}

/** Markdown of the thread's comment: explanation, suggested change, verification and reviewers. */
export function threadMarkdown(finding: ReviewFinding, escape: (text: string) => string): string {
  const parts = [`**${escape(`[${finding.severity}] ${finding.title}`)}**`, escape(finding.explanation)];
  if (finding.suggestedChange) parts.push(`Suggested change:\n\n\`\`\`\n${finding.suggestedChange.replace(/```/g, '``\u200b`')}\n\`\`\``);
  const who = [`Found by ${finding.foundBy.join(', ')}`];
  if (finding.confirmedBy.length) who.push(`confirmed by ${finding.confirmedBy.join(', ')}`);
  if (finding.refutedBy.length) who.push(`refuted by ${finding.refutedBy.join(', ')}`);
  parts.push(`_${escape(verificationLabel(finding))}_ · ${escape(who.join('; '))}`);
  return parts.join('\n\n');
}

/** Plain text for the clipboard. */
export function findingText(finding: ReviewFinding): string {
  return [
    `${finding.file}:${finding.startLine}-${finding.endLine} [${finding.severity}] ${finding.title}`,
    finding.explanation,
    ...(finding.suggestedChange ? ['Suggested change:', finding.suggestedChange] : []),
    `${verificationLabel(finding)}; found by ${finding.foundBy.join(', ')}`,
  ].join('\n\n');
}
