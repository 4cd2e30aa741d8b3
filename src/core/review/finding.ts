// What a review finds, in one shape whoever found it: a finder agent of the fleet, or Claude Code's
// own review. Agents' replies are parsed here once (zod, strict): a finding that does not fit is
// reported as the reviewer's failure, never guessed at.
import * as z from 'zod';

/** Most to least serious; `--fail-on` and the threads' order read this order. */
export const SEVERITIES = ['critical', 'major', 'minor', 'nit'] as const;
export type Severity = (typeof SEVERITIES)[number];

export function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

/** True when `severity` is `threshold` or more serious. */
export function atLeast(severity: Severity, threshold: Severity): boolean {
  return severityRank(severity) <= severityRank(threshold);
}

const MAX_TEXT = 20_000;
const MAX_FINDINGS_PER_REVIEWER = 200;

/** One finding as a finder returns it (the agent's JSON: camelCase, strict). */
export const FinderFindingSchema = z.strictObject({
  file: z.string().min(1).max(1000),
  startLine: z.number().int().min(1),
  endLine: z.number().int().min(1),
  severity: z.enum(SEVERITIES),
  title: z.string().min(1).max(300),
  explanation: z.string().min(1).max(MAX_TEXT),
  suggestedChange: z.string().max(MAX_TEXT).optional(),
});
export type FinderFinding = z.infer<typeof FinderFindingSchema>;

export const FinderReplySchema = z.strictObject({
  findings: z.array(FinderFindingSchema).max(MAX_FINDINGS_PER_REVIEWER),
});

/** A verifier's answer on one finding. */
export const VerdictReplySchema = z.strictObject({
  verdict: z.enum(['confirmed', 'refuted']),
  reason: z.string().min(1).max(MAX_TEXT),
});
export type VerdictReply = z.infer<typeof VerdictReplySchema>;

export type ParsedReply<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * The JSON an agent put in its last message: the last ```json fence, else the whole text. Agents
 * wrap JSON in prose and fences; only the fenced or bare object is read, nothing is repaired.
 */
export function replyJson(text: string): ParsedReply<unknown> {
  const fences = [...text.matchAll(/```(?:json)?[ \t]*\r?\n([\s\S]*?)```/g)];
  const candidate = (fences.length ? fences[fences.length - 1]![1]! : text).trim();
  try {
    return { ok: true, value: JSON.parse(candidate) as unknown };
  } catch {
    return { ok: false, error: `its reply is not JSON (${describeText(text)})` };
  }
}

function describeText(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (!flat) return 'it was empty';
  return `it began "${flat.slice(0, 120)}${flat.length > 120 ? '…' : ''}"`;
}

/** An agent's JSON reply checked against `schema`; `shape` names it in the error ("findings", "step verdicts"). */
export function parseWith<T>(schema: z.ZodType<T>, text: string, shape = 'findings'): ParsedReply<T> {
  const json = replyJson(text);
  if (!json.ok) return json;
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'the reply';
    return { ok: false, error: `its reply does not fit the ${shape} shape (${where}: ${issue?.message ?? 'invalid'})` };
  }
  return { ok: true, value: parsed.data };
}

/** A finder's reply: findings whose end line is before their start are refused too. */
export function parseFinderReply(text: string): ParsedReply<FinderFinding[]> {
  const parsed = parseWith(FinderReplySchema, text);
  if (!parsed.ok) return parsed;
  const backwards = parsed.value.findings.find((f) => f.endLine < f.startLine);
  if (backwards)
    return {
      ok: false,
      error: `a finding in ${backwards.file} ends (line ${backwards.endLine}) before it starts (line ${backwards.startLine})`,
    };
  return { ok: true, value: parsed.value.findings };
}

export function parseVerdictReply(text: string): ParsedReply<VerdictReply> {
  return parseWith(VerdictReplySchema, text);
}
