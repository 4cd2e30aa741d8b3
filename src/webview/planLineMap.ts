// The source-line range of each block of a rendered plan, taken out of markdown-it's HTML before it
// is sanitized and put back on the sanitized elements after. DOMPurify examines, removes and
// re-adds every attribute it keeps, and the two line attributes on each of a 2,000-line plan's
// 1,300 blocks were most of its work; our own integers need none of it.
//
// This is sound because markdown-it (html off) escapes <, > and " in all text and attribute values:
// every "<" followed by a letter in its output opens an element, in document order, and
// ` data-ls="N" data-le="M"` inside a tag can only be what the line-map rule wrote. After
// sanitizing, the ranges go back on elements by their position, and only when the sanitized
// elements are exactly the ones markdown-it wrote (same count, same names, same order); otherwise
// the caller sanitizes the HTML with the attributes in it, as before.

/** On each block of a rendered plan: its 0-based first source line, and the line after its last. */
export const LINE_START_ATTR = 'data-ls';
export const LINE_END_ATTR = 'data-le';

export interface LineMap {
  /** markdown-it's HTML without the line attributes. */
  html: string;
  /** The local name of every element the HTML opens, in document order. */
  tags: string[];
  /** Which of those elements are blocks of the plan, and their 0-based [start, end) source lines. */
  blocks: Array<{ at: number; start: string; end: string }>;
}

const OPENING_TAG = /<([a-z][a-z0-9]*)([^>]*)>/g;
const LINE_ATTRIBUTES = new RegExp(` ${LINE_START_ATTR}="(\\d+)" ${LINE_END_ATTR}="(\\d+)"`);

/** Takes the line attributes out of markdown-it's HTML, remembering where each was. */
export function takeLineMap(html: string): LineMap {
  const tags: string[] = [];
  const blocks: LineMap['blocks'] = [];
  const stripped = html.replace(OPENING_TAG, (tag: string, name: string, attributes: string) => {
    const at = tags.push(name) - 1;
    if (attributes === '') return tag;
    const found = LINE_ATTRIBUTES.exec(attributes);
    if (!found) return tag;
    blocks.push({ at, start: found[1] ?? '', end: found[2] ?? '' });
    return `<${name}${attributes.replace(found[0], '')}>`;
  });
  return { html: stripped, tags, blocks };
}

/** An element as much as this needs: its name, and a way to set an attribute. */
export interface ElementLike {
  readonly localName: string;
  setAttribute(name: string, value: string): void;
}

/**
 * Puts the ranges back on the sanitized elements (all of them, in document order), when they are
 * exactly the elements the HTML opened. Returns false, having changed nothing, otherwise.
 */
export function applyLineMap(map: LineMap, elements: ArrayLike<ElementLike>): boolean {
  const { tags, blocks } = map;
  if (elements.length !== tags.length) return false;
  for (let i = 0; i < tags.length; i++) if (elements[i]?.localName !== tags[i]) return false;
  for (const block of blocks) {
    const element = elements[block.at];
    if (!element) continue; // cannot be: every `at` is below tags.length, checked above
    element.setAttribute(LINE_START_ATTR, block.start);
    element.setAttribute(LINE_END_ATTR, block.end);
  }
  return true;
}
