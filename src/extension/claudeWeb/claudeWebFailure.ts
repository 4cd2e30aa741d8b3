// How a Claude Code on the web failure is offered to a person: the message as the backend wrote it
// (cause, then fix; never a token) and the buttons its remedy calls for (README beside
// src/client/claudeWeb). Pure, so which button goes with which reason is unit-tested without VS Code.
import type { ClaudeWebFailureReason, ClaudeWebRemedy } from '../../client/claudeWeb/errors';

/** What a button does; the VS Code side maps each to a command or a link. */
export type ClaudeWebActionKind =
  | 'retry' // run the failed step again (the login is read afresh)
  | 'open_terminal' // a terminal to run `claude` in
  | 'open_url' // the failure's own link: claude.ai/code, the GitHub app, the session
  | 'choose_backend'
  | 'open_folder' // open a git repository folder
  | 'show_log';

export interface ClaudeWebAction {
  label: string;
  kind: ClaudeWebActionKind;
  /** For open_url. */
  url?: string;
}

/** The parts of a ClaudeWebError this needs (so tests build plain objects). */
export interface ClaudeWebFailureLike {
  reason: ClaudeWebFailureReason;
  remedy: ClaudeWebRemedy;
  url: string | undefined;
  message: string;
}

export const RETRY = 'Retry';
export const OPEN_TERMINAL = 'Open Terminal';
export const CHOOSE_BACKEND = 'Choose Backend…';
export const REVIEW_IN_BROWSER = 'Review in Browser';

/**
 * Buttons for a failure, most useful first. `canRetry` is false where nothing can be run again
 * (a failure seen while following a session that has ended).
 */
export function claudeWebActions(failure: ClaudeWebFailureLike, canRetry = true): ClaudeWebAction[] {
  const actions: ClaudeWebAction[] = [];
  const retry = () => {
    if (canRetry) actions.push({ label: RETRY, kind: 'retry' });
  };
  const link = (label: string, fallback?: string) => {
    const url = failure.url ?? fallback;
    if (url) actions.push({ label, kind: 'open_url', url });
  };
  switch (failure.remedy) {
    case 'run_claude':
      // The person runs `claude` (it refreshes or asks to log in), then retries here.
      actions.push({ label: OPEN_TERMINAL, kind: 'open_terminal' });
      retry();
      break;
    case 'open_claude_code_web':
      link('Open claude.ai/code', 'https://claude.ai/code');
      retry();
      actions.push({ label: CHOOSE_BACKEND, kind: 'choose_backend' });
      break;
    case 'choose_environment':
      actions.push({ label: CHOOSE_BACKEND, kind: 'choose_backend' });
      retry();
      break;
    case 'install_github_app':
      link('Install the GitHub App', 'https://github.com/apps/claude');
      retry();
      break;
    case 'open_git_repository':
      actions.push({ label: 'Open Folder…', kind: 'open_folder' });
      retry();
      break;
    case 'review_in_browser':
      link(REVIEW_IN_BROWSER);
      break;
    case 'contact_admin':
      actions.push({ label: CHOOSE_BACKEND, kind: 'choose_backend' });
      break;
    case 'retry':
      retry();
      actions.push({ label: 'Show Log', kind: 'show_log' });
      break;
  }
  return actions;
}

/** The login is the problem (run `claude`): the remote session itself is fine and is left alone. */
export function isLoginFailure(failure: Pick<ClaudeWebFailureLike, 'remedy'> | undefined): boolean {
  return failure?.remedy === 'run_claude';
}

/**
 * The pre-launch warning (changes the remote will not see, a login about to expire) for a modal
 * question; undefined when there is nothing to say.
 */
export function launchWarning(warnings: readonly string[]): { message: string; detail: string } | undefined {
  const lines = warnings.map((w) => w.trim()).filter((w) => w.length > 0);
  if (lines.length === 0) return undefined;
  return {
    message: 'Claude Code on the web starts from what is on GitHub, not from this folder.',
    detail: `${lines.join('\n')}\n\nLaunch anyway, or cancel to commit and push first.`,
  };
}
