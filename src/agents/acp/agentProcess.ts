// One ACP agent child process: spawned without a shell in its own process group, so stopping it
// ends everything it started (npx wrappers, model helpers) and nothing is left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';

/** How much of the agent's stderr is kept for error messages (the tail, in characters). */
export const STDERR_TAIL_CHARS = 4000;
/** A line longer than this is treated as malformed rather than buffered without bound. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Environment variables that hold our own secrets: never handed to an agent. */
export const SECRET_ENV_NAMES: readonly string[] = ['ULTRAPLAN_SERVER_TOKEN', 'ULTRAPLAN_DATABASE_URL'];

/** `env` without our secrets: an agent plans from untrusted text and must not hold our token. */
export function agentEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = { ...env };
  for (const name of SECRET_ENV_NAMES) delete clean[name];
  return clean;
}

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all (ENOENT, EACCES…). */
  spawnError?: string;
}

export interface AgentProcessOptions {
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Called once for the first stdout line that is not JSON; the stream stops there. */
  onMalformedLine: (line: string) => void;
}

const live = new Set<AgentProcess>();
let exitHookInstalled = false;

/** Last resort: if our own process exits, its agents' process groups go with it. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const agent of live) agent.killGroup('SIGKILL');
  });
}

export class AgentProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<AgentExit>;
  private stderrText = '';
  private exitInfo: AgentExit | undefined;

  constructor(private readonly options: AgentProcessOptions) {
    const [command, ...args] = options.argv;
    if (!command) throw new Error('The agent command is empty.');
    installExitHook();
    this.child = spawn(command, args, {
      cwd: options.cwd,
      env: agentEnvironment(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group: one signal reaches the agent and all its children.
      detached: true,
      shell: false,
      windowsHide: true,
    });
    live.add(this);
    this.exited = new Promise<AgentExit>((resolve) => {
      this.child.once('error', (error: NodeJS.ErrnoException) => {
        // 'error' without 'exit' means it never started.
        if (this.child.pid === undefined) {
          this.exitInfo = { code: null, signal: null, spawnError: `${error.code ?? 'error'}: ${error.message}` };
          live.delete(this);
          resolve(this.exitInfo);
        }
      });
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        // The group may still hold children of the agent; they go too.
        this.killGroup('SIGKILL');
        live.delete(this);
        // Its last stderr lines may still be in the pipe: they explain the exit.
        const info = this.exitInfo;
        const stderr = this.child.stderr;
        if (!stderr || stderr.readableEnded) {
          resolve(info);
          return;
        }
        const timer = setTimeout(() => resolve(info), 250);
        stderr.once('end', () => {
          clearTimeout(timer);
          resolve(info);
        });
      });
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderrText = (this.stderrText + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // Writes after the agent died must not crash us (EPIPE); the exit is reported elsewhere.
    this.child.stdin?.on('error', () => undefined);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get exit(): AgentExit | undefined {
    return this.exitInfo;
  }

  /** The last lines of the agent's stderr, trimmed. */
  stderrTail(): string {
    return this.stderrText.trim();
  }

  /** The agent's stdin as a web stream, for ndJsonStream. */
  input(): WritableStream<Uint8Array> {
    if (!this.child.stdin) throw new Error('agent stdin is not piped');
    return Writable.toWeb(this.child.stdin) as WritableStream<Uint8Array>;
  }

  /** The agent's stdout as a web stream of whole JSON lines; a non-JSON line ends it. */
  output(): ReadableStream<Uint8Array> {
    if (!this.child.stdout) throw new Error('agent stdout is not piped');
    const source = Readable.toWeb(this.child.stdout) as ReadableStream<Uint8Array>;
    return source.pipeThrough(jsonLineGuard(this.options.onMalformedLine));
  }

  killGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already (ESRCH), or it was never a group: signal the child alone.
      try {
        if (this.exitInfo === undefined) this.child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }

  /** Closes stdin, then SIGTERM to the group, then SIGKILL after `graceMs`. Resolves once it exited. */
  async stop(graceMs: number): Promise<AgentExit> {
    if (this.exitInfo) {
      this.killGroup('SIGKILL');
      await this.waitForGroupGone(graceMs);
      return this.exitInfo;
    }
    this.child.stdin?.end();
    this.killGroup('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const forced = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.killGroup('SIGKILL');
        resolve();
      }, graceMs);
    });
    await Promise.race([this.exited, forced]);
    clearTimeout(timer);
    const exit = await this.exited;
    await this.waitForGroupGone(graceMs);
    return exit;
  }

  /** The agent's children die a moment after it: wait (bounded) until its group is empty. */
  private async waitForGroupGone(boundMs: number): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined) return;
    const deadline = Date.now() + boundMs;
    for (;;) {
      try {
        process.kill(-pid, 0);
      } catch {
        return;
      }
      if (Date.now() > deadline) return;
      this.killGroup('SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * Passes whole lines that parse as JSON; the first that does not is reported and ends the stream
 * (the SDK would answer it with a parse error and go on, but an agent writing garbage on its
 * protocol channel is broken, and the person should hear about it).
 */
export function jsonLineGuard(onMalformedLine: (line: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffered = '';
  let broken = false;
  const check = (line: string, controller: TransformStreamDefaultController<Uint8Array>): void => {
    const trimmed = line.trim();
    if (!trimmed || broken) return;
    try {
      JSON.parse(trimmed);
    } catch {
      broken = true;
      onMalformedLine(trimmed);
      controller.terminate();
      return;
    }
    controller.enqueue(encoder.encode(trimmed + '\n'));
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (broken) return;
      buffered += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        check(line, controller);
        if (broken) return;
      }
      if (buffered.length > MAX_LINE_BYTES) {
        broken = true;
        onMalformedLine(`${buffered.slice(0, 200)}… (a line over ${MAX_LINE_BYTES} bytes)`);
        controller.terminate();
      }
    },
    flush(controller) {
      buffered += decoder.decode();
      if (buffered) check(buffered, controller);
    },
  });
}
