// Progress read from Claude Code's own tool calls, for a session whose events Ultraplan does not
// write (Claude Code on the web): TodoWrite's whole list, the Task tools' list built up call by
// call (newer Claude Code offers TaskCreate/TaskUpdate instead of TodoWrite), and each file an
// Edit/Write/MultiEdit/NotebookEdit call names. Only calls after the plan's approval count: the
// reader sees the ExitPlanMode call and its answer in the same stream. Pure; fed one parsed event
// at a time in log order (docs/execution.md). A file under the working folder its init names (the batch
// says it: setWorkingFolder) is made relative to it, as the repository and the branch diff name it.
import * as z from 'zod';
import type { KnownEvent } from '../protocol';
import { EXIT_PLAN_MODE_TOOL } from '../protocolMarkers';
import { TODO_STATUSES, type ProgressFact, type TodoEntry } from './progress';

const MAX_TEXT = 2_000;
const MAX_TASKS = 500;

const TodoWriteInputSchema = z.looseObject({
  todos: z
    .array(
      z.looseObject({
        content: z.string().min(1),
        status: z.enum(TODO_STATUSES),
        activeForm: z.string().optional(),
      }),
    )
    .max(MAX_TASKS),
});
const TaskCreateInputSchema = z.looseObject({ subject: z.string().min(1) });
// TaskUpdate may also delete a task: its status is then "deleted".
const TaskUpdateInputSchema = z.looseObject({
  taskId: z.union([z.string(), z.number()]).transform(String),
  status: z.enum([...TODO_STATUSES, 'deleted']).optional(),
  subject: z.string().min(1).optional(),
});
const FilePathInputSchema = z.looseObject({ file_path: z.string().min(1) });
const NotebookInputSchema = z.looseObject({ notebook_path: z.string().min(1) });

/** Claude Code's tools that change a file, and where their input names it. */
const EDIT_TOOLS: Record<string, z.ZodType<{ path: string }>> = {
  Edit: FilePathInputSchema.transform((i) => ({ path: i.file_path })),
  MultiEdit: FilePathInputSchema.transform((i) => ({ path: i.file_path })),
  Write: FilePathInputSchema.transform((i) => ({ path: i.file_path })),
  NotebookEdit: NotebookInputSchema.transform((i) => ({ path: i.notebook_path })),
};

/** "Task #3 created successfully: …": the only place the Task tools say a new task's id. */
const TASK_CREATED = /^Task #([^\s:]+) created successfully/;

interface Task {
  subject: string;
  status: TodoEntry['status'];
}

function clipText(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: unknown) => (b && typeof b === 'object' && 'text' in b && typeof b.text === 'string' ? b.text : '')).join('');
}

/** A fact read from the stream, with the ExitPlanMode call whose approval it follows. */
export interface ToolUseFact {
  approvedToolUseId: string;
  fact: ProgressFact;
}

export class ToolUseProgressReader {
  readonly #exitPlanCalls = new Set<string>();
  #approved: string | undefined;
  /** TaskCreate calls waiting for their result (which carries the id). */
  readonly #creating = new Map<string, Task>();
  readonly #tasks = new Map<string, Task>();
  #seq = 0;
  /** The folder Claude Code works in (its init's `cwd`): its tools name files by absolute path under it. */
  #cwd: string | undefined;

  /** The ExitPlanMode call whose approval the facts follow (undefined: none approved yet). */
  get approvedToolUseId(): string | undefined {
    return this.#approved;
  }

  /** The folder the agent's init names (ParsedBatch.workingFolder), for the events read after it. */
  setWorkingFolder(cwd: string): void {
    this.#cwd = cwd.startsWith('/') ? cwd.replace(/\/+$/, '') : undefined;
  }

  /** The facts one event says, in order; none before an approval. */
  read(event: KnownEvent, at: string): ToolUseFact[] {
    if (event.type !== 'assistant' && event.type !== 'user') return [];
    const content = event.message.content;
    if (!Array.isArray(content)) return [];
    const facts: ToolUseFact[] = [];
    const push = (fact: ProgressFact): void => {
      if (this.#approved !== undefined) facts.push({ approvedToolUseId: this.#approved, fact });
    };
    for (const block of content) {
      if (block.type === 'tool_use' && 'name' in block && typeof block.name === 'string' && typeof block.id === 'string') {
        this.#toolUse(block.id, block.name, block.input, at, push);
      } else if (block.type === 'tool_result' && 'tool_use_id' in block && typeof block.tool_use_id === 'string') {
        this.#toolResult(block.tool_use_id, 'is_error' in block && block.is_error === true, resultText(block.content), at, push);
      }
    }
    return facts;
  }

  #toolUse(id: string, name: string, input: unknown, at: string, push: (fact: ProgressFact) => void): void {
    if (name === EXIT_PLAN_MODE_TOOL) {
      this.#exitPlanCalls.add(id);
      return;
    }
    if (this.#approved === undefined) return;
    if (name === 'TodoWrite') {
      const parsed = TodoWriteInputSchema.safeParse(input);
      if (!parsed.success) return;
      const entries = parsed.data.todos.map((t) => ({
        content: clipText(t.content),
        status: t.status,
        ...(t.activeForm ? { activeForm: clipText(t.activeForm) } : {}),
      }));
      push({ kind: 'todos', seq: this.#seq++, at, source: 'todo_write', entries });
      return;
    }
    if (name === 'TaskCreate') {
      const parsed = TaskCreateInputSchema.safeParse(input);
      if (parsed.success) this.#creating.set(id, { subject: clipText(parsed.data.subject), status: 'pending' });
      return;
    }
    if (name === 'TaskUpdate') {
      const parsed = TaskUpdateInputSchema.safeParse(input);
      const task = parsed.success ? this.#tasks.get(parsed.data.taskId) : undefined;
      if (!parsed.success || !task) return;
      if (parsed.data.status === 'deleted') this.#tasks.delete(parsed.data.taskId);
      else if (parsed.data.status) task.status = parsed.data.status;
      if (parsed.data.subject) task.subject = clipText(parsed.data.subject);
      push(this.#taskList(at));
      return;
    }
    const edit = EDIT_TOOLS[name]?.safeParse(input);
    if (edit?.success)
      push({ kind: 'file_touched', seq: this.#seq++, at, path: clipText(this.#relative(edit.data.path)), tool: name, toolUseId: id });
  }

  #toolResult(id: string, isError: boolean, text: string, at: string, push: (fact: ProgressFact) => void): void {
    if (this.#exitPlanCalls.has(id)) {
      // Approved: the call was answered without an error (a rejection or teleport is an error result).
      if (!isError) this.#approved = id;
      return;
    }
    const creating = this.#creating.get(id);
    if (!creating) return;
    this.#creating.delete(id);
    const created = isError ? null : TASK_CREATED.exec(text.trim());
    if (!created || this.#tasks.size >= MAX_TASKS) return;
    this.#tasks.set(created[1]!, creating);
    push(this.#taskList(at));
  }

  /** A path under the working folder as the repository names it (the checklist and the diff use those); others as given. */
  #relative(path: string): string {
    const cwd = this.#cwd;
    return cwd !== undefined && path.startsWith(`${cwd}/`) && path.length > cwd.length + 1 ? path.slice(cwd.length + 1) : path;
  }

  /** The Task tools' list as a todo snapshot, as Claude's ACP adapter reports it. */
  #taskList(at: string): ProgressFact {
    const entries = [...this.#tasks.values()].map((t) => ({ content: t.subject, status: t.status }));
    return { kind: 'todos', seq: this.#seq++, at, source: 'todo_write', entries };
  }
}
