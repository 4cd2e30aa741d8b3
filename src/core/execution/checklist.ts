// The checklist a person watches while the agent executes an approved plan: each step's status
// from the agent's own todo reports, the files touched under it, and what the agent did that the
// plan does not name. A pure fold over the progress facts; the same facts give the same checklist.
import type { StepMatcher } from './matching';
import type { ProgressFact, TodoStatus } from './progress';
import type { PlanOutline } from './steps';
import { wordSet } from './textMatch';

/** not_reported: no todo of the agent matched this step. */
export type StepStatus = 'pending' | 'in_progress' | 'done' | 'not_reported';

export interface ChecklistStep {
  id: string;
  title: string;
  startLine: number;
  endLine: number;
  status: StepStatus;
  /** The todos that reported on it, as the agent wrote them, in first-seen order. */
  todos: string[];
  /** Files touched while one of its todos was in progress, in first-touch order. */
  files: string[];
  /**
   * Files touched while no todo named a step, whose path this step's text names (an agent without a
   * todo list, like Gemini CLI, still shows where its edits belong): a hint, not the agent's claim.
   */
  namedFiles: string[];
}

export interface Checklist {
  steps: ChecklistStep[];
  /** Todos that match no step: work the agent reported that the plan does not name. */
  notInPlan: Array<{ content: string; status: TodoStatus }>;
  /** Files touched when no single step's todo was in progress and no step names them. */
  unattributedFiles: string[];
  counts: Record<StepStatus, number> & { total: number };
}

interface TodoState {
  content: string;
  status: TodoStatus;
  stepIds: string[];
}

/** One step's running tally: its todos (first-seen order), files, and how many todos are in each state. */
interface StepTally {
  readonly index: number;
  readonly todos: TodoState[];
  readonly files: string[];
  readonly fileSet: Set<string>;
  readonly namedFiles: string[];
  /** The arrays the last checklist showed, shared by the checklists until a todo or file is added. */
  shownTodos: string[];
  shownFiles: string[];
  shownNamedFiles: string[];
  started: number;
  completed: number;
  /** The status the last checklist showed. */
  shown: StepStatus;
}

function statusOf(tally: StepTally): StepStatus {
  const total = tally.todos.length;
  if (total === 0) return 'not_reported';
  if (tally.completed === total) return 'done';
  return tally.started > 0 ? 'in_progress' : 'pending';
}

const normalise = (content: string): string => content.trim().replace(/\s+/g, ' ');

/**
 * Which todo a text is: its words (textMatch.ts), so "Creating hello.txt" is the same todo as
 * "Create hello.txt" (Claude's adapter reports an entry in progress by its activeForm and the same
 * entry done by its content); a text of filler words only is itself.
 */
function todoKey(content: string): { key: string; words: Set<string>; sorted: string } {
  const words = wordSet(content);
  const sorted = [...words].sort().join(' ');
  return { key: sorted || normalise(content), words, sorted };
}

/**
 * The checklist folded one fact at a time, as the session model receives them: a fact costs its
 * own entries (each distinct todo text is matched once, a step's state is a running count), and
 * `checklist` rebuilds only the steps a fact changed, so the steps that did not change are the
 * previous checklist's objects. Facts are taken in the order given (the session log's order).
 *
 * A todo keeps the last status it was reported with, even after it leaves the list (agents replace
 * their list between phases); a file touch goes to the step of the todo in progress at that
 * moment: the one the host recorded on the touch, else the only in-progress todo of the latest
 * list, else nowhere ("unattributed").
 */
export class ChecklistFold {
  readonly #outline: PlanOutline;
  readonly #matcher: StepMatcher;
  readonly #todos = new Map<string, TodoState>();
  /** Raw todo text to its state: an agent re-sends the same texts, so most lookups skip normalising. */
  readonly #byRaw = new Map<string, TodoState>();
  readonly #tallies = new Map<string, StepTally>();
  readonly #unattributed: string[] = [];
  readonly #unattributedSet = new Set<string>();
  #inProgress: TodoState[] = [];
  /** Each step's text with its sub items', lower case, read the first time a file has no todo. */
  #stepTexts: string[] | undefined;
  /** The steps naming each file seen without a todo: a file is touched again and again. */
  readonly #naming = new Map<string, number[]>();
  readonly #dirtySteps = new Set<number>();
  #dirtyTodos = false;
  #dirtyFiles = false;
  #checklist: Checklist | undefined;
  #counts: Checklist['counts'];
  #facts = 0;

  /** "Executing: 3 of 7 steps done" for the checklist as it stands. */
  summary(finished: boolean): string {
    return checklistSummary(this.checklist, finished);
  }

  constructor(outline: PlanOutline, matcher: StepMatcher) {
    this.#outline = outline;
    this.#matcher = matcher;
    this.#counts = { total: outline.steps.length, pending: 0, in_progress: 0, done: 0, not_reported: outline.steps.length };
    outline.steps.forEach((step, index) =>
      this.#tallies.set(step.id, {
        index,
        todos: [],
        files: [],
        fileSet: new Set(),
        namedFiles: [],
        shownTodos: [],
        shownFiles: [],
        shownNamedFiles: [],
        started: 0,
        completed: 0,
        shown: 'not_reported',
      }),
    );
  }

  /** How many facts were folded. */
  get size(): number {
    return this.#facts;
  }

  add(fact: ProgressFact): void {
    this.#facts++;
    if (fact.kind === 'todos') {
      this.#inProgress = [];
      for (const entry of fact.entries) {
        const state = this.#todo(entry.content, entry.status);
        if (state.status !== entry.status) this.#setStatus(state, entry.status);
        if (entry.status === 'in_progress') this.#inProgress.push(state);
      }
      return;
    }
    const current = fact.todo === undefined ? (this.#inProgress.length === 1 ? this.#inProgress[0] : undefined) : this.#known(fact.todo);
    const stepIds = current?.stepIds ?? [];
    if (stepIds.length === 0) {
      this.#placeByName(fact.path);
      return;
    }
    for (const id of stepIds) {
      const tally = this.#tallies.get(id)!;
      if (tally.fileSet.has(fact.path)) continue;
      tally.fileSet.add(fact.path);
      tally.files.push(fact.path);
      this.#dirtySteps.add(tally.index);
    }
  }

  /** A file no todo places: under the steps whose text names it (at most MAX_NAMING_STEPS), else unattributed. */
  #placeByName(file: string): void {
    let naming = this.#naming.get(file);
    if (naming === undefined) {
      const texts = (this.#stepTexts ??= stepTexts(this.#outline));
      naming = namingSteps(texts, file.toLowerCase());
      const base = file.slice(file.lastIndexOf('/') + 1).toLowerCase();
      // A bare name only when it is a file's name (has an extension) and is not the whole path already tried.
      if (naming.length === 0 && base !== file.toLowerCase() && /.\.[a-z0-9]+$/.test(base)) naming = namingSteps(texts, base);
      this.#naming.set(file, naming);
    }
    if (naming.length === 0 || naming.length > MAX_NAMING_STEPS) {
      if (this.#unattributedSet.has(file)) return;
      this.#unattributedSet.add(file);
      this.#unattributed.push(file);
      this.#dirtyFiles = true;
      return;
    }
    for (const index of naming) {
      const tally = this.#tallies.get(this.#outline.steps[index]!.id)!;
      if (tally.fileSet.has(file) || tally.namedFiles.includes(file)) continue;
      tally.namedFiles.push(file);
      this.#dirtySteps.add(index);
    }
  }

  /** The checklist of the facts so far: the same object while no fact changed it. */
  get checklist(): Checklist {
    const previous = this.#checklist;
    if (previous && this.#dirtySteps.size === 0 && !this.#dirtyTodos && !this.#dirtyFiles) return previous;
    const outline = this.#outline;
    let steps = previous?.steps;
    let counts = this.#counts;
    if (!steps || this.#dirtySteps.size > 0) {
      const next = previous ? previous.steps.slice() : [];
      const rebuild = previous ? this.#dirtySteps : outline.steps.map((_, i) => i);
      counts = this.#counts = { ...counts };
      for (const index of rebuild) {
        const step = outline.steps[index]!;
        const tally = this.#tallies.get(step.id)!;
        const status = statusOf(tally);
        counts[tally.shown]--;
        counts[status]++;
        tally.shown = status;
        next[index] = {
          id: step.id,
          title: step.title,
          startLine: step.startLine,
          endLine: step.endLine,
          status,
          todos: tally.todos.length === tally.shownTodos.length ? tally.shownTodos : (tally.shownTodos = tally.todos.map((t) => t.content)),
          files: tally.files.length === tally.shownFiles.length ? tally.shownFiles : (tally.shownFiles = [...tally.files]),
          namedFiles:
            tally.namedFiles.length === tally.shownNamedFiles.length
              ? tally.shownNamedFiles
              : (tally.shownNamedFiles = [...tally.namedFiles]),
        };
      }
      steps = next;
    }
    let notInPlan = previous?.notInPlan;
    if (!notInPlan || this.#dirtyTodos) {
      notInPlan = [];
      for (const state of this.#todos.values())
        if (state.stepIds.length === 0) notInPlan.push({ content: state.content, status: state.status });
    }
    const unattributedFiles = !previous || this.#dirtyFiles ? [...this.#unattributed] : previous.unattributedFiles;
    this.#dirtySteps.clear();
    this.#dirtyTodos = false;
    this.#dirtyFiles = false;
    this.#checklist = { steps, notInPlan, unattributedFiles, counts };
    return this.#checklist;
  }

  /** The todo for `content`, first seen now (matched, counted on its steps) or known. */
  #todo(content: string, status: TodoStatus): TodoState {
    const raw = this.#byRaw.get(content);
    if (raw) return raw;
    const { key, words, sorted } = todoKey(content);
    let state = this.#todos.get(key);
    if (!state) {
      state = { content, status, stepIds: this.#matcher.matchWords(words, sorted).stepIds };
      this.#todos.set(key, state);
      for (const id of state.stepIds) {
        const tally = this.#tallies.get(id);
        if (!tally) continue;
        tally.todos.push(state);
        this.#count(tally, status, 1);
      }
      if (state.stepIds.length === 0) this.#dirtyTodos = true;
    }
    this.#byRaw.set(content, state);
    return state;
  }

  #known(content: string): TodoState | undefined {
    return this.#byRaw.get(content) ?? this.#todos.get(todoKey(content).key);
  }

  #setStatus(state: TodoState, status: TodoStatus): void {
    for (const id of state.stepIds) {
      const tally = this.#tallies.get(id);
      if (!tally) continue;
      this.#count(tally, state.status, -1);
      this.#count(tally, status, 1);
    }
    state.status = status;
    if (state.stepIds.length === 0) this.#dirtyTodos = true;
  }

  #count(tally: StepTally, status: TodoStatus, by: 1 | -1): void {
    if (status !== 'pending') tally.started += by;
    if (status === 'completed') tally.completed += by;
    this.#dirtySteps.add(tally.index);
  }
}

/** A file named by more steps than this is named by the plan as a whole (package.json, README.md): no step gets it. */
const MAX_NAMING_STEPS = 2;

/** Each step's text and its sub items' (the nodes counting towards it), lower case. */
function stepTexts(outline: PlanOutline): string[] {
  const index = new Map(outline.steps.map((step, i) => [step.id, i]));
  const texts = outline.steps.map(() => '');
  for (const node of outline.nodes) {
    const at = node.stepId === null ? undefined : index.get(node.stepId);
    if (at !== undefined) texts[at] += `\n${node.text.toLowerCase()}`;
  }
  return texts;
}

/** The steps whose text has `name` as a whole path (not inside a longer name: `greet.ts` is not in `src/greet.tsx`). */
function namingSteps(texts: readonly string[], name: string): number[] {
  const found: number[] = [];
  texts.forEach((text, i) => {
    for (let at = text.indexOf(name); at !== -1; at = text.indexOf(name, at + 1)) {
      const before = at === 0 ? '' : text[at - 1]!;
      const after = text[at + name.length] ?? '';
      if (!PATH_CHAR.test(before) && !(PATH_CHAR.test(after) && !/^\.(\s|$)/.test(text.slice(at + name.length, at + name.length + 2)))) {
        found.push(i);
        return;
      }
    }
  });
  return found;
}

const PATH_CHAR = /[a-z0-9_./\\-]/;

/** The checklist of `facts` folded in `seq` order (equal seq: the order given). */
export function buildChecklist(outline: PlanOutline, matcher: StepMatcher, facts: readonly ProgressFact[]): Checklist {
  const fold = new ChecklistFold(outline, matcher);
  const ordered = facts.map((fact, index) => ({ fact, index })).sort((a, b) => a.fact.seq - b.fact.seq || a.index - b.index);
  for (const { fact } of ordered) fold.add(fact);
  return fold.checklist;
}

/**
 * One line for the status bar and the inbox: "Executing: 3 of 7 steps done" while the agent works,
 * "Completed: 7 of 7 steps reported done" when its turn ended. "Reported": these are the agent's
 * own claims; only verification (verification.ts) says whether they hold.
 */
export function checklistSummary(checklist: Checklist, finished: boolean): string {
  const { total, done } = checklist.counts;
  if (total === 0) return finished ? 'Completed: the plan has no steps to check' : 'Executing: the plan has no steps to check';
  const steps = total === 1 ? 'step' : 'steps';
  const extra = checklist.notInPlan.length ? `, ${checklist.notInPlan.length} not in the plan` : '';
  return finished
    ? `Completed: ${done} of ${total} ${steps} reported done${extra}`
    : `Executing: ${done} of ${total} ${steps} done${extra}`;
}
