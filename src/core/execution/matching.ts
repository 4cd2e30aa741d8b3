// Which plan step an agent's todo entry is about (docs/execution.md "How matching works"). A
// matcher is built once per approved plan; each distinct todo text is scored once and remembered,
// since an agent re-sends the same list with new statuses many times.
import type { PlanOutline, PlanStep } from './steps';
import { wordSet } from './textMatch';

/** A todo scoring below this against every step is "not in the plan". */
export const MATCH_THRESHOLD = 0.34;
/** Another step counts as covered by the same todo (the agent merged steps) at this share of the best score. */
const MERGED_SHARE = 0.8;
/** Words on fewer nodes than this are never treated as common: a short plan is scored in full. */
const COMMON_MIN_POSTINGS = 32;

export interface StepMatch {
  /** The node the todo is closest to (a step, a sub-item or a group heading), or null: not in the plan. */
  nodeId: string | null;
  /** The checklist steps the todo reports on, in plan order (a group's todo covers all its steps). */
  stepIds: string[];
  /** The best score (exact when it reaches the threshold; a todo not in the plan may score higher on words every node shares). */
  score: number;
}

export class StepMatcher {
  readonly #nodes: readonly PlanStep[];
  /** Each word of the plan by its number: the nodes' words are numbers, so counting needs no string hashing. */
  readonly #wordIds = new Map<string, number>();
  /** By word number: the nodes with it among their words with children's (all) and among their own. */
  readonly #postingsAll: number[][] = [];
  readonly #postingsOwn: number[][] = [];
  /** By node: its own word numbers, and its words with its sub-items' (an item) or direct children's (a heading). */
  readonly #ownWords: readonly (readonly number[])[];
  readonly #allWords: readonly (readonly number[])[];
  /** Scratch for #score: the best node's words, marked by word number. */
  readonly #bestMark: Uint8Array;
  readonly #sharedOwn: Uint32Array;
  readonly #sharedAll: Uint32Array;
  readonly #ownSize: Uint32Array;
  readonly #allSize: Uint32Array;
  /** Scratch for #score: the nodes touched, and their scores, by touch order. */
  readonly #touched: Int32Array;
  readonly #scores: Float64Array;
  readonly #ownScores: Float64Array;
  /** Each common word's number among the common words (see #commonPostings), by word number; -1 for the others. */
  readonly #commonIndex: Int32Array;
  /** Whether node `at` has common word `c` among its own words (`c * nodes + at`), and among its words with children's. */
  readonly #commonOwn: Uint8Array;
  readonly #commonAll: Uint8Array;
  readonly #memo = new Map<string, StepMatch>();
  readonly #byWords = new Map<string, StepMatch>();
  readonly #stepsUnder = new Map<string, string[]>();
  readonly #order = new Map<string, number>();
  /** A word on more nodes than this is counted on the nodes a rarer word touched only (see #score). */
  readonly #commonPostings: number;

  constructor(outline: PlanOutline) {
    const nodes = (this.#nodes = outline.nodes);
    const index = new Map(nodes.map((n, at) => [n.id, at]));
    for (const node of nodes) this.#order.set(node.id, node.order);
    const own = nodes.map((n) => this.#intern(wordSet(n.text)));
    const children: number[][] = nodes.map(() => []);
    nodes.forEach((node, at) => {
      const parent = node.parentId === null ? undefined : index.get(node.parentId);
      if (parent !== undefined) children[parent]!.push(at);
    });
    // A node's words with its sub-items' (an item) or its direct children's (a heading).
    const withChildren: ReadonlyArray<readonly number[]> = own.map((words, at) => {
      if (children[at]!.length === 0) return words;
      const all = new Set(words);
      for (const child of children[at]!) for (const w of own[child]!) all.add(w);
      return [...all];
    });
    this.#ownWords = own;
    this.#allWords = withChildren;
    this.#bestMark = new Uint8Array(this.#wordIds.size);
    const size = nodes.length;
    this.#sharedOwn = new Uint32Array(size);
    this.#sharedAll = new Uint32Array(size);
    this.#ownSize = new Uint32Array(size);
    this.#allSize = new Uint32Array(size);
    this.#touched = new Int32Array(size);
    this.#scores = new Float64Array(size);
    this.#ownScores = new Float64Array(size);
    for (let w = 0; w < this.#wordIds.size; w++) {
      this.#postingsAll.push([]);
      this.#postingsOwn.push([]);
    }
    for (let at = 0; at < size; at++) {
      this.#ownSize[at] = own[at]!.length;
      this.#allSize[at] = withChildren[at]!.length;
      for (const w of withChildren[at]!) this.#postingsAll[w]!.push(at);
      for (const w of own[at]!) this.#postingsOwn[w]!.push(at);
    }
    this.#commonPostings = Math.max(COMMON_MIN_POSTINGS, size / 8);
    // Fewer than 8 × (words per node) words can be common, so these tables stay small.
    this.#commonIndex = new Int32Array(this.#wordIds.size).fill(-1);
    let commonWords = 0;
    this.#postingsAll.forEach((postings, w) => {
      if (postings.length > this.#commonPostings) this.#commonIndex[w] = commonWords++;
    });
    this.#commonOwn = new Uint8Array(commonWords * size);
    this.#commonAll = new Uint8Array(commonWords * size);
    this.#postingsAll.forEach((postings, w) => {
      const c = this.#commonIndex[w]!;
      if (c < 0) return;
      for (const at of postings) this.#commonAll[c * size + at] = 1;
      for (const at of this.#postingsOwn[w]!) this.#commonOwn[c * size + at] = 1;
    });
    // Steps under each group (nested groups included), for a todo that names a whole group.
    for (let at = size - 1; at >= 0; at--) {
      const node = nodes[at]!;
      if (node.role === 'group') {
        const under = children[at]!.flatMap((c) => {
          const child = nodes[c]!;
          return child.role === 'group' ? (this.#stepsUnder.get(child.id) ?? []) : child.role === 'step' ? [child.id] : [];
        });
        this.#stepsUnder.set(node.id, under);
      }
    }
  }

  match(content: string): StepMatch {
    const key = content.trim().replace(/\s+/g, ' ');
    const known = this.#memo.get(key);
    if (known) return known;
    const result = this.matchWords(wordSet(key));
    this.#memo.set(key, result);
    return result;
  }

  /**
   * The match of a todo already read into its words (`wordSet`): the score is a function of the
   * words alone, so texts with the same words share one answer. `key` names the set when the
   * caller has it (e.g. its sorted words), to skip building it again.
   */
  matchWords(words: ReadonlySet<string>, key = [...words].sort().join(' ')): StepMatch {
    const known = this.#byWords.get(key);
    if (known) return known;
    const result = this.#score(words);
    this.#byWords.set(key, result);
    return result;
  }

  /** The plan's word numbers of `words`, new words numbered (construction only). */
  #intern(words: ReadonlySet<string>): number[] {
    const ids: number[] = [];
    for (const word of words) {
      let id = this.#wordIds.get(word);
      if (id === undefined) this.#wordIds.set(word, (id = this.#wordIds.size));
      ids.push(id);
    }
    return ids;
  }

  #score(todo: ReadonlySet<string>): StepMatch {
    // Shared-word counts from the inverted indexes: only nodes sharing a word are touched, and no
    // set is intersected (the same Dice, counted). The counters are reset through `touched`.
    const sharedOwn = this.#sharedOwn;
    const sharedAll = this.#sharedAll;
    const common: number[] = [];
    const todoIds: number[] = [];
    let touched = 0;
    for (const word of todo) {
      const id = this.#wordIds.get(word);
      if (id === undefined) continue;
      todoIds.push(id);
      if (this.#commonIndex[id]! >= 0) common.push(id);
      else touched = this.#count(id, touched);
    }
    // Early cut-off: a node that shares none of the todo's rarer words shares at most its k common
    // ones, so it scores at most 2k / (|todo| + k). Below the threshold it can neither be the match
    // nor be covered, and the common words are counted only on the nodes already touched.
    const k = common.length;
    if (k > 0 && (2 * k) / (todo.size + k) >= MATCH_THRESHOLD) {
      for (const id of common) touched = this.#count(id, touched);
    } else {
      const size = this.#nodes.length;
      for (const id of common) {
        const base = this.#commonIndex[id]! * size;
        for (let i = 0; i < touched; i++) {
          const at = this.#touched[i]!;
          sharedOwn[at]! += this.#commonOwn[base + at]!;
          sharedAll[at]! += this.#commonAll[base + at]!;
        }
      }
    }
    const size = todo.size;
    const nodes = this.#nodes;
    const order = this.#touched;
    const scores = this.#scores;
    const ownScores = this.#ownScores;
    const ownSize = this.#ownSize;
    const allSize = this.#allSize;
    let best = -1;
    let bestScore = 0;
    for (let i = 0; i < touched; i++) {
      const at = order[i]!;
      const own = (2 * sharedOwn[at]!) / (size + ownSize[at]!);
      const value = Math.max(own, (2 * sharedAll[at]!) / (size + allSize[at]!));
      ownScores[i] = own;
      scores[i] = value;
      // On a tie the earlier step in the plan wins.
      if (value > bestScore || (value === bestScore && best >= 0 && at < best)) {
        best = at;
        bestScore = value;
      }
    }
    let result: StepMatch = { nodeId: null, stepIds: [], score: bestScore };
    if (best >= 0 && bestScore >= MATCH_THRESHOLD) {
      const node = nodes[best]!;
      const covered = new Set(node.role === 'group' ? (this.#stepsUnder.get(node.id) ?? []) : [node.stepId!]);
      for (let i = 0; i < touched; i++) {
        const other = nodes[order[i]!]!;
        if (other.role === 'step' && scores[i]! >= bestScore * MERGED_SHARE && ownScores[i]! >= MATCH_THRESHOLD) {
          if (!covered.has(other.id) && this.#namesMore(todoIds, best, order[i]!)) covered.add(other.id);
        }
      }
      const stepIds = [...covered].sort((a, b) => this.#order.get(a)! - this.#order.get(b)!);
      result = { nodeId: node.id, stepIds, score: bestScore };
    }
    for (let i = 0; i < touched; i++) {
      const at = order[i]!;
      sharedAll[at] = 0;
      sharedOwn[at] = 0;
    }
    return result;
  }

  /**
   * Whether the todo (its word numbers) names something of node `other` that node `best` (with its
   * children) does not: a todo that merges two steps says words of each, while a todo about one
   * step that shares the plan's file names and identifiers with its neighbour says nothing of the
   * neighbour's own ("Create src/greet.ts with greet(name)" is not about "Export greet from
   * src/index.ts").
   */
  #namesMore(todoIds: readonly number[], best: number, other: number): boolean {
    const mark = this.#bestMark;
    for (const w of this.#allWords[best]!) mark[w] = 1;
    const otherOwn = this.#ownWords[other]!;
    let more = false;
    for (const w of todoIds) if (!mark[w] && otherOwn.includes(w)) more = true;
    for (const w of this.#allWords[best]!) mark[w] = 0;
    return more;
  }

  /** Counts word `id` on the nodes that have it, noting each node touched first; returns the touched count. */
  #count(id: number, touched: number): number {
    const sharedOwn = this.#sharedOwn;
    const sharedAll = this.#sharedAll;
    const order = this.#touched;
    for (const at of this.#postingsOwn[id]!) sharedOwn[at]!++;
    for (const at of this.#postingsAll[id]!) if (sharedAll[at]!++ === 0) order[touched++] = at;
    return touched;
  }
}
