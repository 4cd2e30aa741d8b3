// Verification bookkeeping and the merge: each raw finding a finder returned gets one verifier's
// verdict; findings about the same lines and the same problem are then merged into one, keeping
// every finder that raised it and every verifier that confirmed or refuted it.
import { severityRank, type FinderFinding, type Severity } from './finding';

export type Verdict =
  | { by: string; verdict: 'confirmed' | 'refuted'; reason: string }
  /** The verifier run failed: the finding stays unverified, and says so. */
  | { by: string; verdict: 'failed'; reason: string };

export interface RawFinding extends FinderFinding {
  /** Unique within one review ("f1", "f2", …). */
  id: string;
  foundBy: string;
  verdict?: Verdict;
}

export interface ReviewFinding {
  id: string;
  file: string;
  startLine: number;
  endLine: number;
  severity: Severity;
  title: string;
  explanation: string;
  suggestedChange?: string;
  foundBy: string[];
  confirmedBy: string[];
  refutedBy: string[];
  /** Verdicts that confirmed it, and verdicts asked for (the N and M of "verified by N of M"). */
  confirmations: number;
  verdicts: number;
  /** confirmed: more confirmations than refutations; unverified: no verifier could answer. */
  status: 'confirmed' | 'unverified';
  /** Verifiers' reasons, in order, for the thread. */
  reasons: string[];
}

export interface VerificationCounts {
  found: number;
  verified: number;
  refuted: number;
  /** Verifier runs that failed. */
  unverified: number;
}

/** Claims and the verifiers' verdicts on them: review findings, or a verification's gaps and out-of-plan changes. */
export function countVerdicts(raw: ReadonlyArray<{ verdict?: Verdict | undefined }>): VerificationCounts {
  const counts: VerificationCounts = { found: raw.length, verified: 0, refuted: 0, unverified: 0 };
  for (const finding of raw) {
    if (finding.verdict?.verdict === 'confirmed') counts.verified++;
    else if (finding.verdict?.verdict === 'refuted') counts.refuted++;
    else if (finding.verdict?.verdict === 'failed') counts.unverified++;
  }
  return counts;
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{Nd}_]{3,}/gu) ?? []);
}

/** Jaccard similarity of the words (3+ letters) of two texts. */
export function textSimilarity(a: string, b: string): number {
  const left = words(a);
  const right = words(b);
  if (!left.size && !right.size) return 1;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

/** Lines apart that still count as the same place (reviewers point one line off). */
const NEAR_LINES = 2;
const SAME_PROBLEM = 0.3;

export function sameProblem(a: FinderFinding, b: FinderFinding): boolean {
  if (a.file !== b.file) return false;
  const overlaps = a.startLine <= b.endLine + NEAR_LINES && b.startLine <= a.endLine + NEAR_LINES;
  if (!overlaps) return false;
  const exact = a.startLine === b.startLine && a.endLine === b.endLine;
  return exact || textSimilarity(a.title, b.title) >= SAME_PROBLEM;
}

/** Distinct, in number order ("#2" before "#10"). */
function unique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

/**
 * Groups duplicates (transitively) and keeps a group when its confirmations outnumber its
 * refutations, or when no verifier could answer at all (then it is marked unverified). The most
 * serious severity of a group wins; the text is the confirmed report's that came first.
 */
export function mergeFindings(raw: readonly RawFinding[]): ReviewFinding[] {
  const parent = raw.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  for (let i = 0; i < raw.length; i++) {
    for (let j = i + 1; j < raw.length; j++) {
      if (sameProblem(raw[i]!, raw[j]!)) parent[root(j)] = root(i);
    }
  }
  const groups = new Map<number, RawFinding[]>();
  raw.forEach((finding, i) => {
    const key = root(i);
    groups.set(key, [...(groups.get(key) ?? []), finding]);
  });

  const merged: ReviewFinding[] = [];
  for (const group of groups.values()) {
    const confirmed = group.filter((f) => f.verdict?.verdict === 'confirmed');
    const refuted = group.filter((f) => f.verdict?.verdict === 'refuted');
    const answered = confirmed.length + refuted.length;
    if (answered > 0 && confirmed.length <= refuted.length) continue;
    const lead = confirmed[0] ?? group[0]!;
    const severity = group.reduce<Severity>(
      (worst, f) => (severityRank(f.severity) < severityRank(worst) ? f.severity : worst),
      lead.severity,
    );
    merged.push({
      id: lead.id,
      file: lead.file,
      startLine: Math.min(...group.map((f) => f.startLine)),
      endLine: Math.max(...group.map((f) => f.endLine)),
      severity,
      title: lead.title,
      explanation: lead.explanation,
      ...(lead.suggestedChange !== undefined ? { suggestedChange: lead.suggestedChange } : {}),
      foundBy: unique(group.map((f) => f.foundBy)),
      confirmedBy: unique(confirmed.map((f) => f.verdict!.by)),
      refutedBy: unique(refuted.map((f) => f.verdict!.by)),
      confirmations: confirmed.length,
      verdicts: group.filter((f) => f.verdict).length,
      status: answered > 0 ? 'confirmed' : 'unverified',
      reasons: group.flatMap((f) => (f.verdict ? [`${f.verdict.by}: ${f.verdict.reason}`] : [])),
    });
  }
  return merged.sort(
    (a, b) => severityRank(a.severity) - severityRank(b.severity) || a.file.localeCompare(b.file) || a.startLine - b.startLine,
  );
}

/** "verified by 2 of 3", or why it is not verified. */
export function verificationLabel(finding: ReviewFinding): string {
  if (finding.status === 'unverified') return 'not verified (the verifier failed)';
  return `verified by ${finding.confirmations} of ${finding.verdicts}`;
}
