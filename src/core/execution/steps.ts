// An approved plan read into steps with stable ids (docs/execution.md "How steps are read").
// The input is the plan text exactly as approved (its SHA-256 is the decision's planHash); the same
// text always gives the same steps. markdown-it gives the block structure and each block's source
// lines, so code fences, indented code, tables and HTML never become steps.
import MarkdownIt from 'markdown-it';
import { slugify } from '../planFile';
import { labelledListKind, sectionKind, type SectionKind } from './sections';

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

/**
 * group: a heading with steps under it; step: one line of the checklist (a list item at the top
 * of its section, or a heading with no steps under it); sub: an item nested in a step.
 */
export type StepRole = 'group' | 'step' | 'sub';

export interface PlanStep {
  /** Stable for the same plan text: "phase-2-implementation/3", "3.1", "task-1-create-the-manifest". */
  id: string;
  kind: 'heading' | 'item';
  role: StepRole;
  /** The heading's text, or the item's first paragraph, as plain text without its checkbox. */
  title: string;
  /** Every paragraph of the item (or the heading's text) as plain text; nested items are their own steps. */
  text: string;
  /** 1-based, inclusive: a heading's whole section, an item with its nested items. */
  startLine: number;
  endLine: number;
  parentId: string | null;
  /** The checklist step this node counts towards: itself for a step, its step for a sub, null for a group. */
  stepId: string | null;
  /** The checkbox the plan itself carries ("- [x] …"), if any. */
  checked?: boolean;
  /** Document order (0-based); ties in matching go to the earlier step. */
  order: number;
}

/** A heading whose section is not steps (Context, Files, Verification, …). */
export interface SkippedSection {
  title: string;
  kind: Exclude<SectionKind, 'work'>;
  startLine: number;
  endLine: number;
}

export interface PlanOutline {
  /** The plan's single level-1 heading, which names the plan rather than a step. */
  title?: string;
  /** Every node (groups, steps, subs) in document order. */
  nodes: PlanStep[];
  /** The checklist: nodes whose role is "step", in document order. */
  steps: PlanStep[];
  skipped: SkippedSection[];
  lineCount: number;
}

const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

/** Plain text of an inline token: text and code spans, line breaks as spaces, markup dropped. */
function inlineText(token: Token): string {
  let out = '';
  for (const child of token.children ?? []) {
    if (child.type === 'text' || child.type === 'code_inline') out += child.content;
    else if (child.type === 'softbreak' || child.type === 'hardbreak') out += ' ';
    else if (child.type === 'image') out += child.content;
  }
  return out.replace(/\s+/g, ' ').trim();
}

const CHECKBOX = /^\[([ xX~\-/])\]\s+/;

interface Building {
  node: PlanStep;
  level: number;
  /** Segments already used by this node's children (ids stay unique among siblings). */
  used: Set<string>;
  items: number;
}

export function readPlanSteps(plan: string): PlanOutline {
  const tokens = markdown.parse(plan, {});
  const lines = plan.split(/\r\n|\r|\n/);
  const lastContentLine = (start: number, end: number): number => {
    let last = end;
    while (last > start && /^\s*(?:[-*_]\s*){0,}$/.test(lines[last - 1] ?? '')) last--;
    return last;
  };
  const h1s = tokens.filter((t) => t.type === 'heading_open' && t.tag === 'h1');
  const titleToken = h1s.length === 1 && tokens[0] === h1s[0] ? tokens[0] : undefined;

  const nodes: PlanStep[] = [];
  const skipped: SkippedSection[] = [];
  const root: Building = { node: undefined as unknown as PlanStep, level: 0, used: new Set(), items: 0 };
  // Open headings (level 1-6) and open list items; a null entry is skipped with all it holds.
  const headings: Array<{ building: Building | null; level: number; skipped?: SkippedSection }> = [];
  const items: Array<Building | null> = [];
  const lists: Array<'work' | 'labelled' | 'skip'> = [];
  let title: string | undefined;

  const segment = (parent: Building, wanted: string): string => {
    let candidate = wanted;
    for (let n = 2; parent.used.has(candidate); n++) candidate = `${wanted}-${n}`;
    parent.used.add(candidate);
    return candidate;
  };
  const idFor = (parent: Building, seg: string, isItem: boolean): string => {
    if (parent === root) return seg;
    return `${parent.node.id}${isItem && parent.node.kind === 'item' ? '.' : '/'}${seg}`;
  };
  const closeHeadingsFrom = (level: number, nextLine: number): void => {
    while (headings.length && headings[headings.length - 1]!.level >= level) {
      const open = headings.pop()!;
      const end = lastContentLine(0, nextLine);
      if (open.building) open.building.node.endLine = Math.max(open.building.node.startLine, end);
      if (open.skipped) open.skipped.endLine = Math.max(open.skipped.startLine, end);
    }
  };
  const currentHeading = (): Building | null => (headings.length ? headings[headings.length - 1]!.building : root);

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === 'heading_open') {
      const level = Number(token.tag.slice(1));
      const text = inlineText(tokens[i + 1]!);
      const start = token.map![0] + 1;
      closeHeadingsFrom(level, token.map![0]);
      if (token === titleToken) {
        title = text;
        continue;
      }
      const parent = currentHeading();
      const kind = sectionKind(text);
      if (parent === null || kind !== 'work') {
        const section: SkippedSection | undefined =
          parent !== null && kind !== 'work' ? { title: text, kind, startLine: start, endLine: start } : undefined;
        if (section) skipped.push(section);
        headings.push({ building: null, level, ...(section ? { skipped: section } : {}) });
        continue;
      }
      const node: PlanStep = {
        id: idFor(parent, segment(parent, slugify(text)), false),
        kind: 'heading',
        role: 'step',
        title: text,
        text,
        startLine: start,
        endLine: start,
        parentId: parent === root ? null : parent.node.id,
        stepId: null,
        order: nodes.length,
      };
      nodes.push(node);
      headings.push({ building: { node, level, used: new Set(), items: 0 }, level });
    } else if (token.type === 'bullet_list_open' || token.type === 'ordered_list_open') {
      const previous = tokens[i - 1];
      const label = previous?.type === 'paragraph_close' && previous.level === token.level ? inlineText(tokens[i - 2]!) : '';
      const outer = items.length ? items[items.length - 1] !== null : currentHeading() !== null;
      lists.push(!outer ? 'skip' : label === '' || labelledListKind(label) === 'work' ? 'work' : 'labelled');
    } else if (token.type === 'bullet_list_close' || token.type === 'ordered_list_close') {
      lists.pop();
    } else if (token.type === 'list_item_open') {
      const list = lists[lists.length - 1];
      // A list labelled "Files:" runs on into checkbox items after a blank line (one list to
      // markdown-it): a checkbox item is a task whatever the label said.
      const checkbox = tokens[i + 1]?.type === 'paragraph_open' && CHECKBOX.test(tokens[i + 2]?.content ?? '');
      if (list === 'skip' || (list === 'labelled' && !checkbox)) {
        items.push(null);
        continue;
      }
      const parent = items.length ? items[items.length - 1]! : currentHeading()!;
      parent.items++;
      const node: PlanStep = {
        id: idFor(parent, segment(parent, String(parent.items)), true),
        kind: 'item',
        role: parent.node?.kind === 'item' ? 'sub' : 'step',
        title: '',
        text: '',
        startLine: token.map![0] + 1,
        endLine: lastContentLine(token.map![0] + 1, token.map![1]),
        parentId: parent === root ? null : parent.node.id,
        stepId: null,
        order: nodes.length,
      };
      nodes.push(node);
      items.push({ node, level: token.level, used: new Set(), items: 0 });
    } else if (token.type === 'list_item_close') {
      items.pop();
    } else if (token.type === 'inline' && tokens[i - 1]?.type === 'paragraph_open' && items.length) {
      const open = items[items.length - 1];
      if (!open) continue;
      let text = inlineText(token);
      if (!open.node.text) {
        const box = CHECKBOX.exec(text);
        if (box) {
          open.node.checked = box[1] !== ' ';
          text = text.slice(box[0].length);
        }
        open.node.title = text;
      }
      open.node.text = open.node.text ? `${open.node.text} ${text}` : text;
    }
  }
  closeHeadingsFrom(1, lines.length);
  assignRoles(nodes);
  return {
    ...(title !== undefined ? { title } : {}),
    nodes,
    steps: nodes.filter((n) => n.role === 'step'),
    skipped,
    lineCount: lines.length,
  };
}

/** A heading with steps under it is a group; every sub-item counts towards the step above it. */
function assignRoles(nodes: PlanStep[]): void {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parents = new Set(nodes.map((n) => n.parentId));
  for (const node of nodes) if (node.kind === 'heading' && parents.has(node.id)) node.role = 'group';
  for (const node of nodes) {
    if (node.role === 'step') node.stepId = node.id;
    else if (node.role === 'sub') {
      let up = byId.get(node.parentId!)!;
      while (up.role === 'sub') up = byId.get(up.parentId!)!;
      node.stepId = up.id;
    }
  }
}
