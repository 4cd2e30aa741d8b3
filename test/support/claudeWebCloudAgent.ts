// The remote side of a Claude Code on the web session, for tests: an agent on the real session host
// (behind the strict Claude-compatibility server) that writes its log as Claude Code in the cloud
// does (stream-json events: a system init naming its working folder, assistant tool_use blocks with
// their tool_result answers, a result per turn) and works in its own clone of the repository,
// pushing its commits to the session's outcome branch on the remote, as the cloud container does.
// What it does after the approval and on each later message is the test's script.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { APPROVED_PLAN_MARKER, EXIT_PLAN_MODE_TOOL, type AnyEvent, type PermissionDecision } from '../../src/core/protocol';
import type { Agent, AgentContext } from '../../src/agents/agent';

/** Where Claude Code on the web checks the repository out: its tools name files by absolute path under it. */
export const CLOUD_CWD = '/home/user/widgets';
const MODEL = 'claude-sonnet-4-5';

export interface CloudTodo {
  content: string;
  activeForm: string;
  status: 'pending' | 'in_progress' | 'completed';
}

/** What one turn of the script does, in order. */
export type CloudMove =
  | { todos: CloudTodo[] }
  | { write: string; text: string }
  | { edit: string; oldString: string; text: string }
  | { push: string }
  | { say: string };

export interface CloudScript {
  plan: string;
  /** The turn the approval starts. */
  execution: CloudMove[];
  /** The turns later messages start, one per message. */
  continued: CloudMove[][];
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Claude', '-c', 'user.email=noreply@anthropic.com', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });

export class CloudSessionAgent implements Agent {
  readonly label = 'Claude Code on the web (stand-in)';
  /** The messages this session received after its plan was approved, as the agent got them. */
  readonly messages: string[] = [];
  #ctx: AgentContext | undefined;
  #waiting: { requestId: string; toolUseId: string } | undefined;
  #turn = 1;
  #continued = 0;

  /**
   * `checkout`: the agent's own clone of the remote; `branch`: the session's outcome branch, read
   * when it first pushes (the session's create request named it).
   */
  constructor(
    private readonly script: CloudScript,
    private readonly checkout: string,
    private readonly branch: () => string,
  ) {}

  async start(ctx: AgentContext, _prompt: string): Promise<void> {
    this.#ctx = ctx;
    ctx.emit({
      type: 'system',
      subtype: 'init',
      cwd: CLOUD_CWD,
      model: MODEL,
      permissionMode: 'plan',
      tools: ['Bash', 'Edit', 'Read', 'TodoWrite', 'Write', EXIT_PLAN_MODE_TOOL],
    });
    ctx.setStatus('running');
    const toolUseId = toolId();
    const requestId = randomUUID();
    ctx.emit(assistant([{ type: 'tool_use', id: toolUseId, name: EXIT_PLAN_MODE_TOOL, input: { plan: this.script.plan } }]));
    ctx.emit({
      type: 'control_request',
      request_id: requestId,
      request: { subtype: 'can_use_tool', tool_name: EXIT_PLAN_MODE_TOOL, input: { plan: this.script.plan }, tool_use_id: toolUseId },
    });
    this.#waiting = { requestId, toolUseId };
    ctx.setStatus('requires_action');
  }

  onDecision(requestId: string, decision: PermissionDecision): void {
    const ctx = this.#ctx;
    const waiting = this.#waiting;
    if (!ctx || !waiting || waiting.requestId !== requestId) return;
    this.#waiting = undefined;
    if (decision.behavior !== 'allow') {
      ctx.emit(toolResult(waiting.toolUseId, decision.message, true));
      this.#end(ctx, 'The plan was not approved.');
      return;
    }
    ctx.emit(
      toolResult(waiting.toolUseId, `User has approved your plan. You can now start coding.\n\n${APPROVED_PLAN_MARKER}${this.script.plan}`),
    );
    this.#play(ctx, this.script.execution);
  }

  onUserMessage(text: string): void {
    const ctx = this.#ctx;
    if (!ctx) return;
    this.messages.push(text);
    const moves = this.script.continued[this.#continued++];
    this.#turn++;
    ctx.emit({ type: 'system', subtype: 'init', cwd: CLOUD_CWD, model: MODEL, permissionMode: 'default', tools: [] });
    this.#play(ctx, moves ?? [{ say: 'Nothing more to do.' }]);
  }

  async stop(): Promise<void> {
    this.#ctx = undefined;
  }

  #play(ctx: AgentContext, moves: CloudMove[]): void {
    ctx.setStatus('running');
    let said = '';
    for (const move of moves) {
      if ('say' in move) {
        said = move.say;
        ctx.emit(assistant([{ type: 'text', text: move.say }]));
      } else if ('todos' in move) {
        this.#tool(
          ctx,
          'TodoWrite',
          { todos: move.todos },
          'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable',
        );
      } else if ('write' in move) {
        this.#writeFile(move.write, move.text);
        const at = `${CLOUD_CWD}/${move.write}`;
        this.#tool(ctx, 'Write', { file_path: at, content: move.text }, `File created successfully at: ${at}`);
      } else if ('edit' in move) {
        this.#writeFile(move.edit, move.text);
        const at = `${CLOUD_CWD}/${move.edit}`;
        this.#tool(
          ctx,
          'Edit',
          { file_path: at, old_string: move.oldString, new_string: move.text },
          `The file ${at} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n     1\t${move.text.split('\n')[0]}`,
        );
      } else {
        const branch = this.branch();
        git(this.checkout, 'checkout', '-q', '-B', branch);
        git(this.checkout, 'add', '-A');
        git(this.checkout, 'commit', '-qm', move.push);
        git(this.checkout, 'push', '-q', 'origin', `${branch}:refs/heads/${branch}`);
        const command = `git add -A && git commit -m ${JSON.stringify(move.push)} && git push -u origin ${branch}`;
        this.#tool(
          ctx,
          'Bash',
          { command, description: 'Commit and push the changes' },
          `branch '${branch}' set up to track 'origin/${branch}'.`,
        );
      }
    }
    this.#end(ctx, said);
  }

  #writeFile(path: string, text: string): void {
    const file = join(this.checkout, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }

  #tool(ctx: AgentContext, name: string, input: Record<string, unknown>, result: string): void {
    const id = toolId();
    ctx.emit(assistant([{ type: 'tool_use', id, name, input }]));
    ctx.emit(toolResult(id, result));
  }

  #end(ctx: AgentContext, said: string): void {
    ctx.emit({
      type: 'result',
      subtype: 'success',
      is_error: false,
      num_turns: this.#turn,
      result: said,
      session_id: ctx.sessionId,
      total_cost_usd: 0,
    });
    ctx.setStatus('idle');
  }
}

function toolId(): string {
  return `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

function assistant(content: unknown[]): AnyEvent {
  return {
    type: 'assistant',
    parent_tool_use_id: null,
    message: {
      id: `msg_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content,
      stop_reason: null,
    },
  };
}

function toolResult(toolUseId: string, content: string, isError = false): AnyEvent {
  return {
    type: 'user',
    parent_tool_use_id: null,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content, ...(isError ? { is_error: true } : {}) }] },
  };
}
