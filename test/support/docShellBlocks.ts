// The shell blocks of the docs, as a reader would run them (test/scripts/docsShellBlocks.test.ts).
// A block is read as logical commands (a line ending in `\` continues), each of our programs'
// commands followed by the comment lines that show its output. How a command is run:
//
// - Our programs (`node dist/server.mjs`, `node dist/review.mjs`, `ultraplan-review`,
//   `node scripts/try-*.mjs`) run in `sh -c 'exec …'` and must either print every output line the
//   block shows (`…` stands for any text; without shown lines, the program's own ready line:
//   `ultraplan-server listening on …`, `ultraplan-server worker … running`, the try scripts' first
//   line) and keep running, or exit 0 having printed them. Those still running are stopped with
//   SIGTERM at the end of their section (the `##` heading they are under) and must exit 0.
// - `npm ci` and `npm run build` are what the test process already has: the bundles are rebuilt
//   when older than their sources (ensureBundleBuilt) instead.
// - Any other command runs in `sh -c` and must exit 0.
//
// Every command of a page runs in one folder of its own (with `dist`, `examples`, `scripts` and
// `test` linked from the repository), with HOME another, so `~` and `./ultraplan-data` stay there.
// Placeholders are replaced by exact text before anything runs: PLACEHOLDERS below.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ensureBundleBuilt, REPO_ROOT, tempDir } from './serverProcess';

export interface ShellBlock {
  /** Relative to the repository: `docs/team.md`. */
  readonly file: string;
  /** The line of the opening fence, 1-based. */
  readonly line: number;
  /** The `##` heading the block is under ('' before the first). */
  readonly section: string;
  readonly lang: string;
  readonly text: string;
}

export interface Command {
  readonly text: string;
  /** The output lines the block shows after it (without `# `). */
  readonly expected: string[];
  readonly program: Program | null;
}

export type Program = 'server' | 'worker' | 'review' | 'try-postgres' | 'try-issuer' | 'system-deps';

const FENCE = /^(\s*)```(\w*)\s*$/;

/** Every fenced block of a markdown file. */
export function fencedBlocks(file: string): ShellBlock[] {
  const lines = readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^## /.test(line)) section = line.slice(3).trim();
    const open = FENCE.exec(line);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j] as string); j++) body.push((lines[j] as string).slice((open[1] ?? '').length));
    blocks.push({ file, line: i + 1, section, lang: open[2] ?? '', text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** Which of our programs a command starts, if any. */
export function programOf(command: string): Program | null {
  if (/^node dist\/server\.mjs worker(\s|$)/.test(command) || /^ultraplan-server worker(\s|$)/.test(command)) return 'worker';
  if (/^node dist\/server\.m?js(\s|$)/.test(command) || /^ultraplan-server(\s|$)/.test(command)) return 'server';
  if (/^node dist\/review\.m?js(\s|$)/.test(command) || /^ultraplan-review(\s|$)/.test(command)) return 'review';
  if (/^node scripts\/try-postgres\.m?js(\s|$)/.test(command)) return 'try-postgres';
  if (/^node scripts\/try-issuer\.m?js(\s|$)/.test(command)) return 'try-issuer';
  if (/^node scripts\/ensure-system-deps\.m?js(\s|$)/.test(command)) return 'system-deps';
  // A file of ours that is not one of them (a renamed or misspelt one) still names our programs.
  if (/^node (dist|scripts)\/(server|review|try-)/.test(command)) return 'server';
  return null;
}

/**
 * The block's logical commands, each with the output lines shown after it: the comment lines that
 * follow a command of our programs directly (no blank line between). Other comments are the reader's.
 */
export function commandsOf(text: string): Command[] {
  const commands: Command[] = [];
  let pending: string | null = null;
  let outputOf: Command | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending !== null) {
      pending += ` ${line.replace(/\\$/, '').trim()}`;
      if (line.endsWith('\\')) continue;
      outputOf = push(pending);
      pending = null;
      continue;
    }
    if (/^\s*#/.test(line)) {
      if (outputOf?.program) outputOf.expected.push(line.replace(/^\s*#\s?/, ''));
      continue;
    }
    outputOf = null;
    if (line.trim() === '') continue;
    if (line.endsWith('\\')) pending = line.replace(/\\$/, '').trim();
    else outputOf = push(line.trim());
  }
  if (pending !== null) push(pending);
  return commands;

  function push(text: string): Command {
    const trimmed = text.trim();
    const command = { text: trimmed, expected: [], program: programOf(trimmed) };
    commands.push(command);
    return command;
  }
}

/** Whether a block starts one of our programs (such a block is run, or listed as not runnable). */
export function startsOurPrograms(block: ShellBlock): boolean {
  return commandsOf(block.text).some((c) => c.program !== null);
}

/** `…` in a shown line stands for any text; the rest is matched exactly, as a whole line. */
export function outputPattern(shown: string): RegExp {
  return new RegExp(`^${shown.split('…').map(escapeRegExp).join('.*')}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The line a program prints when it is up, for a command whose block shows no output. */
const READY_LINES: Record<Program, string | null> = {
  server: 'ultraplan-server listening on …',
  worker: 'ultraplan-server worker … running',
  review: null,
  'try-postgres': 'postgres://…',
  'try-issuer': 'issuer …',
  'system-deps': null,
};

export interface Started {
  readonly command: string;
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
}

/** What a page's commands run in, and what they started. */
export class PageRun {
  readonly cwd: string;
  readonly home: string;
  private readonly running: Started[] = [];

  constructor(
    private readonly substitute: (text: string) => string,
    private readonly timeoutMs = 90_000,
  ) {
    this.cwd = tempDir('ultraplan-docs-cwd-');
    this.home = tempDir('ultraplan-docs-home-');
    for (const name of ['dist', 'examples', 'scripts', 'test']) symlinkSync(path.join(REPO_ROOT, name), path.join(this.cwd, name));
  }

  private env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: this.home };
    // A reader's shell has none of the test's own settings for the server.
    for (const name of Object.keys(env)) if (name.startsWith('ULTRAPLAN_')) delete env[name];
    return env;
  }

  /** Runs one block's commands (placeholders replaced); rejects with what went wrong and where. */
  async runBlock(block: ShellBlock): Promise<void> {
    for (const written of commandsOf(block.text)) {
      const command = {
        ...written,
        text: this.substitute(withDefaultPort(written)),
        expected: written.expected.map((line) => this.substitute(line)),
      };
      await this.runCommand(command).catch((err: unknown) => {
        throw new Error(`${block.file}:${block.line} \`${command.text}\`: ${(err as Error).message}`);
      });
    }
  }

  private async runCommand(command: Command): Promise<void> {
    if (/^npm ci$/.test(command.text)) return;
    if (/^npm run build$/.test(command.text)) {
      ensureBundleBuilt('server');
      ensureBundleBuilt('review');
      return;
    }
    if (command.program === null) {
      const result = spawnSync('sh', ['-c', command.text], { cwd: this.cwd, env: this.env(), encoding: 'utf8', timeout: this.timeoutMs });
      if (result.status !== 0) throw new Error(`exited ${result.status ?? result.signal}\n${result.stderr}`);
      return;
    }
    const shown = command.expected.length > 0 ? command.expected : [READY_LINES[command.program]].filter((l) => l !== null);
    const ready = READY_LINES[command.program];
    await this.start(command.text, shown.map(outputPattern), ready === null ? null : outputPattern(ready));
  }

  /** `ready`: the program's own ready line; once it is printed, what the block shows has a moment to follow. */
  private start(text: string, patterns: RegExp[], ready: RegExp | null): Promise<void> {
    const child = spawn('sh', ['-c', `exec ${text}`], { cwd: this.cwd, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const started: Started = { command: text, child, stdout: () => stdout, stderr: () => stderr };
    /** The shown lines, in order, each a whole line of stdout. */
    const shownAll = () => {
      const lines = stdout.split('\n');
      let at = 0;
      for (const pattern of patterns) {
        while (at < lines.length && !pattern.test(lines[at] as string)) at++;
        if (at === lines.length) return false;
        at++;
      }
      return true;
    };
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => done(`printed no ${patterns.map(String).join(', ')} within ${this.timeoutMs} ms`), this.timeoutMs);
      let grace: NodeJS.Timeout | undefined;
      const onData = () => {
        if (patterns.length > 0 && shownAll()) done();
        else if (ready && !grace && stdout.split('\n').some((line) => ready.test(line))) {
          grace = setTimeout(() => done(`printed ${ready} but not ${patterns.map(String).join(', ')}`), 1000);
        }
      };
      const onClose = (code: number | null, signal: NodeJS.Signals | null) => {
        if (code !== 0) done(`exited ${code ?? signal}`);
        else if (!shownAll()) done('exited 0 without printing what the block shows');
        else done();
      };
      const done = (failure?: string) => {
        clearTimeout(timer);
        clearTimeout(grace);
        child.stdout.off('data', onData);
        child.off('close', onClose);
        if (failure === undefined) {
          if (child.exitCode === null && child.signalCode === null) this.running.push(started);
          resolve();
          return;
        }
        // SIGTERM first: a program that started others (try-postgres.mjs its PostgreSQL) stops
        // them on it; SIGKILL would leave them running after the test.
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
        reject(new Error(`${failure}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      };
      child.stdout.on('data', onData);
      child.on('close', onClose);
    });
  }

  /** What this page started and still runs, oldest first. */
  get processes(): readonly Started[] {
    return this.running;
  }

  /**
   * SIGTERM to what still runs, the databases last (a worker or a replica before the PostgreSQL it
   * uses); each must exit 0. What failed to, with its stderr.
   */
  async stopAll(): Promise<string[]> {
    const started = this.running.splice(0);
    const isDatabase = (p: Started) => /^node scripts\/try-postgres/.test(p.command);
    const failures = await Promise.all(started.filter((p) => !isDatabase(p)).map(stopOne));
    failures.push(...(await Promise.all(started.filter(isDatabase).map(stopOne))));
    return failures.filter((f): f is string => f !== null);
  }
}

async function stopOne(started: Started): Promise<string | null> {
  const { child } = started;
  if (child.exitCode !== null || child.signalCode !== null) {
    return `\`${started.command}\` had exited (${child.exitCode ?? child.signalCode}) before its section ended\n${started.stderr()}`;
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await exited;
  clearTimeout(timer);
  return code === 0 ? null : `\`${started.command}\` exited ${code} on SIGTERM\n${started.stderr()}`;
}

/** The port each long-running program of ours takes when given no --port. */
const DEFAULT_PORTS: Partial<Record<Program, string>> = { server: '8787', 'try-postgres': '55432', 'try-issuer': '8790' };

/**
 * A program given no --port listens on its default: the flag is spelt out, so the page's port for
 * that number (a free one) applies and a test never takes the real one.
 */
function withDefaultPort(command: Command): string {
  const port = command.program ? DEFAULT_PORTS[command.program] : undefined;
  return port !== undefined && !/\s--port[\s=]/.test(command.text) && !/\s(--help|-h)\b/.test(command.text)
    ? `${command.text} --port ${port}`
    : command.text;
}

/** The `--flags` a command gives. */
export function flagsOf(command: string): string[] {
  return [...command.matchAll(/(?:^|\s)(--[a-z][a-z0-9-]*)/g)].map((m) => m[1] as string);
}

/** A 0400 file holding `text`, as a deployment's Secret is mounted. */
export function secretFileIn(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `${text}\n`, { mode: 0o400 });
  return file;
}
