// The keyword trigger (docs/protocol.md section 7): does a prompt invoke `ultraplan` (or hint at
// `ultrareview`)? One implementation, parameterised by the word, so both words follow the same
// rules. The rules err towards "not an invocation": a word inside code, a quote, a path, a file
// name or a question is talk about the feature, not a request to launch it.

/** One place where the word triggers, as typed. `end` is exclusive. */
export interface KeywordTrigger {
  word: string;
  start: number;
  end: number;
}

const ULTRAPLAN = 'ultraplan';
const ULTRAREVIEW = 'ultrareview';
/** What replacement strips: `ultraplan` -> `plan`, keeping the case of what remains. */
const ULTRA_PREFIX_LENGTH = 'ultra'.length;

/** Word character = Unicode letter, decimal digit or `_` (the spec's definition, used everywhere). */
const WORD_CHAR = /^[\p{L}\p{Nd}_]$/u;

/** The code point that ends just before `index` (surrogate pairs read as one character). */
function charBefore(text: string, index: number): string | undefined {
  if (index <= 0) return undefined;
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(index - 2, index);
  }
  return text[index - 1];
}

/** The code point that starts at `index`. */
function charAt(text: string, index: number): string | undefined {
  const cp = text.codePointAt(index);
  return cp === undefined ? undefined : String.fromCodePoint(cp);
}

function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && WORD_CHAR.test(ch);
}

const CLOSER: Readonly<Record<string, string>> = {
  '`': '`',
  '"': '"',
  '{': '}',
  '(': ')',
  '[': ']',
  '<': '>',
  "'": "'",
};

function isAsciiLetterOrSlash(ch: string | undefined): boolean {
  return ch !== undefined && /^[A-Za-z/]$/.test(ch);
}

/**
 * Ranges [start, end) covered by closed delimited spans. Spans do not nest: while one is open
 * only its own closer ends it. Two exceptions keep ordinary prose from hiding words: `<` opens
 * only before a letter or `/` (so `a < b` is a comparison, not a tag), and `'` opens only after
 * a non-word character and closes only before one (so the apostrophes of "let's" are not
 * quotes). A new `[` restarts an open `[` span, which makes `[a [b] c]` hide only `[b]`.
 */
function closedSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let open: string | null = null;
  let openAt = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (open !== null) {
      if (open === '[' && ch === '[') {
        openAt = i;
        continue;
      }
      if (ch !== CLOSER[open]) continue;
      if (open === "'" && isWordChar(charAt(text, i + 1))) continue;
      spans.push([openAt, i + 1]);
      open = null;
      continue;
    }
    if (!(ch in CLOSER)) continue;
    if (ch === '<' && !isAsciiLetterOrSlash(text[i + 1])) continue;
    if (ch === "'" && isWordChar(charBefore(text, i))) continue;
    open = ch;
    openAt = i;
  }
  // A span never closed hides nothing: it is simply dropped.
  return spans;
}

function escapeRegExp(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Every place where `word` triggers in `text`, by the rules of docs/protocol.md section 7. */
export function findKeywordTriggerPositions(text: string, word: string): KeywordTrigger[] {
  // Cheap exits first: most prompts never mention the word.
  if (text.startsWith('/')) return [];
  if (!text.toLowerCase().includes(word.toLowerCase())) return [];

  const wholeWord = new RegExp(`(?<![\\p{L}\\p{Nd}_])${escapeRegExp(word)}(?![\\p{L}\\p{Nd}_])`, 'giu');
  const spans = closedSpans(text);
  const triggers: KeywordTrigger[] = [];
  for (const match of text.matchAll(wholeWord)) {
    const start = match.index;
    const end = start + match[0].length;
    if (spans.some(([s, e]) => start >= s && start < e)) continue;
    const before = text[start - 1];
    if (before === '/' || before === '\\' || before === '-') continue;
    const after = text[end];
    if (after === '/' || after === '\\' || after === '-' || after === '?') continue;
    // `ultraplan.md` is a file name; `ultraplan.` ends a sentence.
    if (after === '.' && isWordChar(charAt(text, end + 1))) continue;
    triggers.push({ word: match[0], start, end });
  }
  return triggers;
}

export function findUltraplanTriggerPositions(text: string): KeywordTrigger[] {
  return findKeywordTriggerPositions(text, ULTRAPLAN);
}

export function hasUltraplanKeyword(text: string): boolean {
  return findUltraplanTriggerPositions(text).length > 0;
}

/**
 * The prompt sent to the planning session: the first trigger loses its `ultra` prefix, keeping
 * the case typed (`ULTRAPLAN` -> `PLAN`). When nothing else is left the prompt is empty (`''`), so
 * the caller can ask for one instead of sending a lone "plan". Without a trigger: unchanged.
 */
export function replaceUltraplanKeyword(text: string): string {
  const [first] = findUltraplanTriggerPositions(text);
  if (!first) return text;
  const before = text.slice(0, first.start);
  const after = text.slice(first.end);
  if ((before + after).trim() === '') return '';
  return before + first.word.slice(ULTRA_PREFIX_LENGTH) + after;
}

export function findUltrareviewTriggerPositions(text: string): KeywordTrigger[] {
  return findKeywordTriggerPositions(text, ULTRAREVIEW);
}

export function hasUltrareviewKeyword(text: string): boolean {
  return findUltrareviewTriggerPositions(text).length > 0;
}
