// Claude Code's own review: `claude ultrareview [target] --json --no-post`, its output mapped by
// core/review/claudeReview.ts. It runs in Anthropic's cloud and is billed as extra usage after
// the free runs: the caller tells the person before starting (CLAUDE_BILLING_NOTICE).
import { spawn } from 'node:child_process';
import { CLAUDE_REVIEWER, mapClaudeReview } from '../../core/review/claudeReview';
export { CLAUDE_BILLING_NOTICE } from '../../core/review/claudeReview';
import type { RawFinding } from '../../core/review/merge';
import type { ReviewerReport } from '../../core/review/outcome';
import type { ReviewScope } from '../../core/review/scope';

/** What Claude's review can look at: the branch (against a base) or a pull request; not staged work or a range. */
export function claudeTarget(scope: ReviewScope): { ok: true; args: string[] } | { ok: false; error: string } {
  if (scope.kind === 'branch') return { ok: true, args: scope.base ? [scope.base] : [] };
  if (scope.kind === 'pr') return { ok: true, args: [String(scope.number)] };
  return {
    ok: false,
    error: `Claude Code's review looks at a branch or a pull request, not ${scope.kind === 'staged' ? 'staged changes' : 'a commit range'}.`,
  };
}

export interface ClaudeReviewOptions {
  /** The command line of Claude Code (default ["claude"]). */
  command: readonly string[];
  cwd: string;
  scope: ReviewScope;
  /** The folder is trusted (VS Code's workspace trust): passes --trust-workspace for this run only. */
  trusted: boolean;
  signal: AbortSignal;
  timeoutMinutes?: number;
  env?: NodeJS.ProcessEnv;
  /** Claude's progress lines (stderr), for the log. */
  onLine?: (line: string) => void;
}

const MAX_OUTPUT = 64 * 1024 * 1024;

export interface ClaudeReviewRun {
  reviewer: ReviewerReport;
  /** Its findings, verified by Claude's review itself before it prints them. */
  findings: RawFinding[];
  cancelled: boolean;
}

export async function runClaudeReview(options: ClaudeReviewOptions): Promise<ClaudeReviewRun> {
  const failed = (error: string): ClaudeReviewRun => ({
    reviewer: { label: CLAUDE_REVIEWER, role: 'claude', ok: false, error },
    findings: [],
    cancelled: false,
  });
  const target = claudeTarget(options.scope);
  if (!target.ok) return failed(target.error);
  const [command, ...prefix] = options.command;
  if (!command) return failed('no command is set for Claude Code');
  const args = [...prefix, 'ultrareview', ...target.args, '--json', '--no-post', ...(options.trusted ? ['--trust-workspace'] : [])];
  if (options.timeoutMinutes) args.push('--timeout', String(options.timeoutMinutes));
  const result = await new Promise<{ stdout: string; stderr: string; code: number | null; error?: string }>((resolve) => {
    // Its own process group, so a cancel ends Claude Code and whatever it started.
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < MAX_OUTPUT) stderr += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) options.onLine?.(line);
    });
    const stop = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
    };
    options.signal.addEventListener('abort', stop, { once: true });
    child.on('error', (error: NodeJS.ErrnoException) => {
      options.signal.removeEventListener('abort', stop);
      resolve({
        stdout,
        stderr,
        code: null,
        error: error.code === 'ENOENT' ? `Claude Code is not installed (${command} was not found)` : error.message,
      });
    });
    child.on('close', (code) => {
      options.signal.removeEventListener('abort', stop);
      resolve({ stdout, stderr, code });
    });
  });
  if (options.signal.aborted) return { ...failed('cancelled'), cancelled: true };
  if (result.error) return failed(result.error);
  const mapped = mapClaudeReview(result.stdout, result.stderr, result.code);
  if (!mapped.ok) return failed(mapped.error);
  return {
    reviewer: { label: CLAUDE_REVIEWER, role: 'claude', ok: true, findings: mapped.findings.length },
    findings: mapped.findings,
    cancelled: false,
  };
}
