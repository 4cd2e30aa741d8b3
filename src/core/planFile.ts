// Where a teleported plan is saved: `<yyyy-mm-dd>-<slug>.plan.md` under the plans folder (the name
// editors list as plans), never overwriting an existing file (`-2`, `-3`, … appended). Pure: the caller supplies the clock
// and the "does this name exist" check.

const MAX_SLUG_LENGTH = 60;
/** Bounds the search for a free name, so a folder full of plans cannot loop us forever. */
export const MAX_PLAN_FILE_ATTEMPTS = 1000;

/** A readable ASCII slug: lower case, words joined by "-", at most 60 characters, never empty. */
export function slugify(text: string): string {
  const ascii = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents split off by NFKD
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (ascii.length <= MAX_SLUG_LENGTH) return ascii.length > 0 ? ascii : 'plan';
  const cut = ascii.slice(0, MAX_SLUG_LENGTH);
  const lastDash = cut.lastIndexOf('-');
  // Cut at a word boundary when one is reasonably close to the limit.
  const trimmed = (lastDash > MAX_SLUG_LENGTH / 2 ? cut.slice(0, lastDash) : cut).replace(/-+$/g, '');
  return trimmed.length > 0 ? trimmed : 'plan';
}

/**
 * Words that name no plan in particular: a heading made only of them ("Implementation Plan",
 * "Goal", "Steps") is skipped.
 */
const GENERIC_WORDS = new Set(
  (
    'implementation plan proposed revised updated final draft overview summary the a an and of revision rev v demo ' +
    'goal goals context background approach steps changes tasks testing tests verification notes scope requirements risks'
  ).split(' '),
);

function isGeneric(slug: string): boolean {
  return slug.split('-').every((word) => GENERIC_WORDS.has(word) || /^\d+$/.test(word));
}

/**
 * The plan's name, so saved plans can be told apart: its first Markdown heading that says more
 * than "Implementation Plan" (a leading "Plan:" or "Plan (demo):" dropped), else the session title
 * (without the "ultraplan: " prefix), else its first non-blank line.
 */
export function planSlug(plan: string, title?: string): string {
  const headings = [...plan.matchAll(/^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((m) =>
    m[1]!.replace(/^((implementation|proposed)\s+)?plan\s*(\([^)]*\))?\s*[:\-–]\s*/i, ''),
  );
  const fromTitle = title?.replace(/^ultraplan:\s*/i, '');
  const firstLine = plan.split(/\r?\n/).find((l) => l.trim().length > 0);
  for (const candidate of [...headings, fromTitle, firstLine]) {
    if (!candidate) continue;
    const slug = slugify(candidate);
    if (!isGeneric(slug)) return slug;
  }
  return 'plan';
}

/** Local calendar date as yyyy-mm-dd (the person's day, not UTC's). */
export function isoLocalDate(date: Date): string {
  const y = String(date.getFullYear()).padStart(4, '0');
  const m = String(date.getMonth() + 1).padStart(2, '0');
  const d = String(date.getDate()).padStart(2, '0');
  return `${y}-${m}-${d}`;
}

/** The n-th candidate file name (n = 1 is the plain name, then -2, -3, …). */
export function planFileName(date: Date, slug: string, n = 1): string {
  const base = `${isoLocalDate(date)}-${slug}`;
  return n <= 1 ? `${base}.plan.md` : `${base}-${n}.plan.md`;
}

/**
 * The first candidate name for which `exists` says no. Throws after MAX_PLAN_FILE_ATTEMPTS names,
 * with a message a person can act on.
 */
export async function firstFreePlanFileName(
  date: Date,
  slug: string,
  exists: (name: string) => Promise<boolean> | boolean,
): Promise<string> {
  for (let n = 1; n <= MAX_PLAN_FILE_ATTEMPTS; n++) {
    const name = planFileName(date, slug, n);
    if (!(await exists(name))) return name;
  }
  throw tooManyPlanFiles(date, slug);
}

/** Every candidate name for this date and slug is taken. */
export function tooManyPlanFiles(date: Date, slug: string): Error {
  return new Error(
    `More than ${MAX_PLAN_FILE_ATTEMPTS} plans named "${planFileName(date, slug)}" already exist; move some out of the plans folder.`,
  );
}

/** The plan text of a saved plan file: what follows its front matter, or the whole text without one. */
export function planOfFile(text: string): string {
  const match = /^---\r?\n[\s\S]*?\r?\n---\r?\n(?:\r?\n)?/.exec(text);
  return match ? text.slice(match[0].length) : text;
}
