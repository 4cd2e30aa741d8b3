// Word sets for comparing an agent's todo with a plan step: lower case, accents and markup
// dropped, camelCase and snake_case split, filler words removed, light suffix stemming. Pure and
// deterministic; docs/execution.md "How matching works" gives the rule.

/** Words that say nothing about which step is meant. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be by do does done for from has have in into is it its of on or so that the their then this these those to ' +
    'via was we will with our your all any each new also should must can may need needs step steps task tasks todo phase sub ' +
    'milestone make sure ensure e g eg etc'
  ).split(' '),
);

/** "createUserTable" → "create User Table"; "user_table" → "user table". */
function splitIdentifiers(text: string): string {
  return text.replace(/([\p{Ll}\p{Nd}])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
}

/** The same split for ASCII text, where the Unicode classes are exactly these ranges (the common case, and faster). */
function splitAsciiIdentifiers(text: string): string {
  return text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z])([A-Z][a-z])/g, '$1 $2');
}

// eslint-disable-next-line no-control-regex -- the ASCII range, control characters included.
const ASCII = /^[\x00-\x7f]*$/;

/** Light stemming: plurals, -ing, -ed, a final e or y, so "creating", "created", "creates" agree. */
export function stem(word: string): string {
  if (/^\p{Nd}+$/u.test(word) || word.length <= 3) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  if (w.endsWith('ation') && w.length > 7) w = w.slice(0, -5);
  if ((w.endsWith('e') || w.endsWith('y')) && w.length > 3) w = w.slice(0, -1);
  // "adding" → "add", "mapped" → "map": a doubled final consonant left by the suffix.
  if (w.length > 3 && w[w.length - 1] === w[w.length - 2] && !/[aeiouls]/.test(w[w.length - 1]!)) w = w.slice(0, -1);
  return w;
}

/** Stems by word: a plan and its todos repeat a small vocabulary. Bounded, and a pure function's cache. */
const stems = new Map<string, string>();
const MAX_STEMS = 20_000;

function cachedStem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= MAX_STEMS) stems.clear();
    stems.set(word, (stemmed = stem(word)));
  }
  return stemmed;
}

/** The distinct stemmed words of a text. */
export function wordSet(text: string): Set<string> {
  // ASCII text needs no accent folding, and its letters and digits are [a-z0-9] once lower-cased.
  const words = ASCII.test(text)
    ? splitAsciiIdentifiers(text)
        .toLowerCase()
        .split(/[^a-z0-9]+/)
    : splitIdentifiers(text)
        .normalize('NFKD')
        .replace(/[\u0300-\u036f]/g, '')
        .toLowerCase()
        .split(/[^\p{L}\p{Nd}]+/u);
  const out = new Set<string>();
  for (const word of words) {
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    out.add(cachedStem(word));
  }
  return out;
}

/** Sørensen–Dice coefficient of two word sets: 2|A∩B| / (|A|+|B|), 0 when both are empty. */
export function dice(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const word of small) if (large.has(word)) shared++;
  return (2 * shared) / (a.size + b.size);
}
