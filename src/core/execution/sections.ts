// Which parts of a plan are steps. A plan mixes what to do (phases, tasks, numbered changes) with
// what the agent found and how to check the result (Context, Files, Verification); only the first
// are held against the execution. Deterministic: the decision reads the heading's or label's words
// only (docs/execution.md "How steps are read").

/** context: background and reference; verification: how to check the work; work: steps. */
export type SectionKind = 'context' | 'verification' | 'work';

/**
 * Heading names (lower case, punctuation dropped, the part before a colon) that are not steps.
 * A heading is matched as a whole, so "Implement the context menu" stays work.
 */
const CONTEXT_HEADINGS = new RegExp(
  '^(?:' +
    [
      'context(?: and orientation)?',
      'background',
      'overview',
      'summary',
      'tl ?dr',
      'goals?',
      'non goals',
      'purpose(?: big picture)?',
      'big picture',
      'problem(?: statement)?',
      'motivation',
      'why',
      'what',
      'notes?',
      'artifacts(?: and notes)?',
      'risks?(?: and mitigations?)?',
      'open questions',
      'questions',
      'assumptions',
      'constraints',
      'requirements',
      'references?',
      'out of scope',
      'scope',
      'decision log',
      'decisions?',
      'surprises(?: discoveries)?',
      'outcomes?(?: retrospective)?',
      'retrospective',
      'status(?: snapshot)?',
      'date',
      'depends on',
      'dependencies',
      'interfaces(?: and dependencies)?',
      'idempotence(?: and recovery)?',
      'rollback(?: plan)?',
      'tech stack',
      'architecture',
      'research',
      'key findings?',
      'findings',
      'current state',
      'files?',
      'files? summary',
      'file map',
      'files? to (?:create|modify|change|delete|touch)(?: or (?:create|modify|change|delete))?',
      '(?:critical|key|relevant|affected|reference) files',
      'sequencing',
      'timeline',
      'estimates?',
    ].join('|') +
    ')$',
);

const VERIFICATION_HEADINGS = new RegExp(
  '^(?:' +
    [
      'verification(?: plan| steps)?',
      'verify',
      'how to verify',
      'validation(?: and acceptance)?',
      'acceptance(?: criteria)?',
      'testing(?: strategy| plan)?',
      'tests?(?: plan| strategy)?',
      'test plan',
      '(?:.+ )?exit criteria',
      'success criteria',
      'definition of done',
    ].join('|') +
    ')$',
);

/** Lower case words of a heading or label, "Files to Modify:" -> "files to modify". */
export function headingWords(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{Nd}]+/gu, ' ')
    .trim();
}

/** The part before a colon: "Date: 2026-02-04" names a date; "Phase 1: Setup" is a phase. */
function head(text: string): string {
  const colon = text.indexOf(':');
  return headingWords(colon > 0 ? text.slice(0, colon) : text);
}

export function sectionKind(heading: string): SectionKind {
  const words = head(heading);
  if (VERIFICATION_HEADINGS.test(words)) return 'verification';
  if (CONTEXT_HEADINGS.test(words)) return 'context';
  return 'work';
}

/**
 * A paragraph that labels the list right after it ("**Files:**", "Files to modify:",
 * "Verification:") makes that list reference, not steps. Only a short paragraph ending in a colon
 * counts: "Then, in order:" is a work label and its list stays steps.
 */
export function labelledListKind(paragraph: string): SectionKind {
  const text = paragraph.trim();
  if (!/:\**$/.test(text) || text.length > 80) return 'work';
  return sectionKind(text.replace(/[:*\s]+$/, ''));
}
