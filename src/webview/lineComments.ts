// Maps rendered plan blocks back to source lines, for line comments: which block a click hit, which
// lines a text selection spans, and where a comment on given lines is shown. Built once per plan
// render; lookups are linear in the number of blocks at worst (no per-line DOM queries).
import { PANEL_LIMITS, type LineComment } from '../core/panelMessages';
import { LINE_END_ATTR, LINE_START_ATTR } from './planMarkdown';

export interface PlanBlock {
  /** 0-based first source line. */
  start: number;
  /** 0-based line after the last one (markdown-it's map end). */
  end: number;
  element: HTMLElement;
}

/** A range of source lines, 0-based and inclusive at both ends. */
export interface LineRange {
  first: number;
  last: number;
}

export class PlanBlockIndex {
  readonly blocks: PlanBlock[];
  readonly #byElement = new Map<Element, PlanBlock>();
  readonly #lines: string[];

  constructor(root: HTMLElement, source: string) {
    this.#lines = source.split('\n');
    this.blocks = [];
    for (const element of root.querySelectorAll<HTMLElement>(`[${LINE_START_ATTR}]`)) {
      const start = Number(element.getAttribute(LINE_START_ATTR));
      const end = Number(element.getAttribute(LINE_END_ATTR));
      if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) continue;
      const block = { start, end, element };
      this.blocks.push(block);
      this.#byElement.set(element, block);
    }
  }

  get lineCount(): number {
    return this.#lines.length;
  }

  /** The innermost block an event target or selection node is in. */
  blockOf(node: Node | null): PlanBlock | undefined {
    let element: Element | null = node instanceof Element ? node : (node?.parentElement ?? null);
    while (element) {
      const block = this.#byElement.get(element);
      if (block) return block;
      element = element.parentElement;
    }
    return undefined;
  }

  rangeOf(block: PlanBlock): LineRange {
    return { first: block.start, last: this.#lastContentLine(block) };
  }

  /** The innermost block containing `line`, else the last block that starts before it. */
  blockForLine(line: number): PlanBlock | undefined {
    let containing: PlanBlock | undefined;
    let before: PlanBlock | undefined;
    for (const block of this.blocks) {
      if (block.start > line) break;
      before = block;
      // Document order: a later containing block is nested inside an earlier one.
      if (line < block.end) containing = block;
    }
    return containing ?? before;
  }

  blocksWithin(range: LineRange): PlanBlock[] {
    return this.blocks.filter((b) => b.start >= range.first && this.#lastContentLine(b) <= range.last);
  }

  /**
   * What a person sees of `range`, to label its comment: the rendered text of the block the range
   * starts in (comment threads left out), clipped, and how many more blocks it spans. Markdown
   * source line numbers mean nothing to the person, who clicked on text.
   */
  labelOf(range: LineRange): string {
    const first = this.blockForLine(range.first);
    const text = first ? visibleText(first.element) : '';
    if (!first || text === '') return rangeLabel({ line: range.first + 1, endLine: range.last + 1 });
    const more = this.blocksWithin(range).filter((b) => !b.element.contains(first.element) && !first.element.contains(b.element)).length;
    const clipped = text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1).trimEnd()}…` : text;
    return `“${clipped}”${more > 0 ? ` and ${more} more` : ''}`;
  }

  /** The comment a user writes on `range` (1-based lines, quote from the plan source). */
  comment(range: LineRange, text: string): LineComment {
    const quote = this.#lines.slice(range.first, range.last + 1).join('\n');
    const clipped = quote.length > PANEL_LIMITS.quoteChars ? `${quote.slice(0, PANEL_LIMITS.quoteChars - 1)}…` : quote;
    const comment: LineComment = { line: range.first + 1, quote: clipped, text };
    if (range.last > range.first) comment.endLine = range.last + 1;
    return comment;
  }

  // markdown-it's map end can include trailing blank lines (lists); a comment should not claim them.
  #lastContentLine(block: PlanBlock): number {
    let last = block.end - 1;
    while (last > block.start && (this.#lines[last] ?? '').trim() === '') last--;
    return last;
  }
}

const LABEL_CHARS = 60;

/** A block's text as shown, without the comment threads and composer placed inside it. */
function visibleText(element: HTMLElement): string {
  const copy = element.cloneNode(true) as HTMLElement;
  for (const inner of copy.querySelectorAll('.comment-thread, .comment-composer')) inner.remove();
  return (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
}

export function rangeLabel(comment: { line: number; endLine?: number | undefined }): string {
  const end = comment.endLine ?? comment.line;
  return end > comment.line ? `Lines ${comment.line}–${end}` : `Line ${comment.line}`;
}

/** Where a thread of comments goes after a block without breaking its HTML (inside an li, after a pre or table). */
export function insertAfterBlock(block: HTMLElement, node: Node): void {
  const tag = block.tagName;
  if (tag === 'LI') {
    block.appendChild(node);
    return;
  }
  if (tag === 'CODE' && block.parentElement?.tagName === 'PRE') {
    block.parentElement.after(node);
    return;
  }
  if (['TR', 'TH', 'TD', 'THEAD', 'TBODY'].includes(tag)) {
    const table = block.closest('table');
    if (table) {
      table.after(node);
      return;
    }
  }
  block.after(node);
}
