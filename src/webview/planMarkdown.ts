// Untrusted markdown (a plan, a question, a result, all written by a model) to inert DOM.
// markdown-it with html off escapes raw HTML; links must be absolute http(s) or they stay text;
// images never load (their alt text and a link stand in). DOMPurify then cleans the output again
// (defence in depth, should a markdown-it rule ever emit something unexpected), and the page's CSP
// blocks scripts, remote images and styles as a third layer.
//
// Block elements of a plan carry data-ls / data-le: the 0-based [start, end) source-line range from
// markdown-it's token.map, so a click on a block maps back to the plan lines it came from. Those
// numbers are set after sanitizing, not sent through it (planLineMap.ts says why that is sound).
//
// The render is bounded: a plan longer than MAX_RENDERED_PLAN_CHARS, or with tables of more than
// MAX_RENDERED_TABLE_CELLS cells, is not parsed as Markdown at all (a 1.6 MB table froze the panel
// for seconds) but shown as plain text, with a line saying so.
import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { isHttpUrl } from '../core/panelMessages';
import { LINE_END_ATTR, LINE_START_ATTR, applyLineMap, takeLineMap } from './planLineMap';

export { LINE_END_ATTR, LINE_START_ATTR };

function createMarkdown(withLineMap: boolean): InstanceType<typeof MarkdownIt> {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
  // The default validator lets command:, vscode: and other schemes through; we allow only http(s).
  md.validateLink = (url: string) => isHttpUrl(url);
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx];
    if (!token) return '';
    const alt = token.content || 'image';
    const src = String(token.attrGet('src') ?? '');
    const escape = md.utils.escapeHtml;
    const label = `<span class="plan-image" title="Images are not loaded in the review panel">[image: ${escape(alt)}]</span>`;
    return isHttpUrl(src) ? `${label} <a href="${escape(src)}" class="plan-image-link">${escape(src)}</a>` : label;
  };
  if (withLineMap) {
    md.core.ruler.push('ultraplan_line_map', (state) => {
      for (const token of state.tokens) {
        if (token.map && token.nesting >= 0 && token.type !== 'inline') {
          token.attrSet(LINE_START_ATTR, String(token.map[0]));
          token.attrSet(LINE_END_ATTR, String(token.map[1]));
        }
      }
    });
  }
  return md;
}

const planMarkdown = createMarkdown(true);
const textMarkdown = createMarkdown(false);

const FORBIDDEN_TAGS = [
  'img',
  'picture',
  'source',
  'video',
  'audio',
  'track',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'style',
  'link',
  'meta',
  'base',
  'form',
  'input',
  'button',
  'textarea',
  'select',
  'option',
  'svg',
  'math',
  'template',
  'slot',
  'dialog',
  'portal',
];
const FORBIDDEN_ATTRS = ['style', 'src', 'srcset', 'action', 'formaction', 'background', 'poster', 'ping', 'target'];

function sanitize(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, {
    ALLOWED_URI_REGEXP: /^https?:\/\//i,
    FORBID_TAGS: FORBIDDEN_TAGS,
    FORBID_ATTR: FORBIDDEN_ATTRS,
    ALLOW_DATA_ATTR: true,
    RETURN_DOM_FRAGMENT: true,
  });
}

/** Plans longer than this are shown as text, not rendered as Markdown. */
export const MAX_RENDERED_PLAN_CHARS = 400_000;
/** Tables with more cells than this in all are shown as text, not rendered. */
export const MAX_RENDERED_TABLE_CELLS = 5_000;

/** The cells a Markdown table could make of `source`, counted without parsing: its pipes on table-like lines. */
export function estimatedTableCells(source: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let cells = 0;
  let lineStart = 0;
  while (lineStart <= source.length && cells <= stopAbove) {
    let lineEnd = source.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = source.length;
    let pipes = 0;
    for (let i = lineStart; i < lineEnd; i++) if (source.charCodeAt(i) === 124 /* | */) pipes++;
    // A row "| a | b |" has pipes + 1 cells at most; a line without a pipe is no table row.
    if (pipes > 0) cells += pipes + 1;
    lineStart = lineEnd + 1;
  }
  return cells;
}

/** Why `source` (a plan, or the agent's text) is shown as text instead of rendered Markdown, or undefined when it is rendered. */
export function planRenderBound(source: string, what = 'plan'): string | undefined {
  if (source.length > MAX_RENDERED_PLAN_CHARS) {
    return `This ${what} is ${formatSize(source.length)} long, more than the ${formatSize(MAX_RENDERED_PLAN_CHARS)} the panel renders as Markdown, so it is shown as plain text.`;
  }
  if (estimatedTableCells(source, MAX_RENDERED_TABLE_CELLS) > MAX_RENDERED_TABLE_CELLS) {
    return `This ${what} has tables of more than ${MAX_RENDERED_TABLE_CELLS.toLocaleString('en-US')} cells, more than the panel renders as Markdown, so it is shown as plain text.`;
  }
  return undefined;
}

function formatSize(chars: number): string {
  return chars >= 1_000_000 ? `${(chars / 1_000_000).toFixed(1)} MB` : `${Math.round(chars / 1000)} kB`;
}

/** A plan as plain text under a line saying why (no Markdown is parsed). */
export function renderPlanText(source: string, why: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const notice = document.createElement('p');
  notice.className = 'plan-bounded';
  notice.setAttribute('role', 'note');
  notice.textContent = why;
  const text = document.createElement('pre');
  text.className = 'plan-text';
  text.textContent = source;
  fragment.append(notice, text);
  return fragment;
}

/** markdown-it's HTML for a plan, its blocks carrying their line attributes: not yet sanitized. */
export function planHtmlUnsanitized(source: string): string {
  return planMarkdown.render(source);
}

/**
 * A plan as sanitized DOM whose block elements carry their source-line range, and whether the
 * ranges were put on after sanitizing (planLineMap.ts) or, should the sanitized elements not be
 * the ones markdown-it wrote, went through the sanitizer in the HTML.
 */
export function renderPlan(source: string): { fragment: DocumentFragment; lineMap: 'after' | 'through' } {
  const html = planHtmlUnsanitized(source);
  // The sanitizer sees every byte of the plan either way; only our own line numbers skip it.
  const map = takeLineMap(html);
  const fragment = sanitize(map.html);
  if (applyLineMap(map, fragment.querySelectorAll('*'))) return { fragment, lineMap: 'after' };
  return { fragment: sanitize(html), lineMap: 'through' };
}

/** A plan as sanitized DOM whose block elements carry their source-line range. */
export function renderPlanMarkdown(source: string): DocumentFragment {
  return renderPlan(source).fragment;
}

/** The reference the line map must match: markdown-it's HTML, line attributes and all, through the sanitizer. */
export function renderPlanThroughSanitizer(source: string): DocumentFragment {
  return sanitize(planHtmlUnsanitized(source));
}

/** Model text (a question, a result) as sanitized DOM; as plain text past the same bound as a plan. */
export function renderTextMarkdown(source: string): DocumentFragment {
  const bound = planRenderBound(source, 'text');
  return bound === undefined ? sanitize(textMarkdown.render(source)) : renderPlanText(source, bound);
}
