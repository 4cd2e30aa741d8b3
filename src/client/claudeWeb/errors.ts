// Every way Claude Code on the web can refuse to start or to carry a decision, as one error class
// with a reason enum, so the extension switches on data (which button to offer) and shows the
// message as written: what happened, then what to do. Messages never hold a token.

export const CLAUDE_WEB_FAILURE_REASONS = [
  // The login (docs/protocol.md section 9), in the order they are checked.
  'not_logged_in', // no credentials anywhere, or no claudeAiOauth (an API-key login)
  'credentials_malformed', // a credentials file or Keychain entry that is not Claude Code's JSON
  'missing_scope', // a login without user:sessions:claude_code (not a Claude.ai account login)
  'token_expired', // expiresAt is past: Claude Code must refresh it (we never do)
  'token_refused', // the service answered 401/403 to the token
  'organization_unknown', // no organization in .claude.json and the profile call gave none
  // Eligibility, in Claude Code's order.
  'org_policy', // the organization's policy disables remote sessions
  'no_environment', // no cloud environment (or the configured one does not exist)
  'not_git_repository',
  'no_github_remote',
  'github_app_not_installed',
  // After launch.
  'decision_not_delivered', // the service refused the decision (HTTP is the only way)
  'service_unreachable', // network failure or 5xx while checking eligibility
] as const;
export type ClaudeWebFailureReason = (typeof CLAUDE_WEB_FAILURE_REASONS)[number];

/** What the extension should offer next to the message. */
export type ClaudeWebRemedy =
  | 'run_claude' // run `claude` once in a terminal, then Retry
  | 'open_claude_code_web' // set something up at claude.ai/code, then Retry
  | 'install_github_app'
  | 'choose_environment'
  | 'open_git_repository'
  | 'review_in_browser'
  | 'contact_admin'
  | 'retry';

const REMEDY: Record<ClaudeWebFailureReason, ClaudeWebRemedy> = {
  not_logged_in: 'run_claude',
  credentials_malformed: 'run_claude',
  missing_scope: 'run_claude',
  token_expired: 'run_claude',
  token_refused: 'run_claude',
  organization_unknown: 'run_claude',
  org_policy: 'contact_admin',
  no_environment: 'open_claude_code_web',
  not_git_repository: 'open_git_repository',
  no_github_remote: 'open_git_repository',
  github_app_not_installed: 'install_github_app',
  decision_not_delivered: 'review_in_browser',
  service_unreachable: 'retry',
};

export const CLAUDE_CODE_WEB_URL = 'https://claude.ai/code';
export const CLAUDE_GITHUB_APP_URL = 'https://github.com/apps/claude';

export class ClaudeWebError extends Error {
  override readonly name = 'ClaudeWebError';
  readonly remedy: ClaudeWebRemedy;
  readonly url: string | undefined;
  constructor(
    readonly reason: ClaudeWebFailureReason,
    message: string,
    options?: {
      cause?: unknown;
      /** A link that helps: the GitHub app page, claude.ai/code, the session in the browser. */
      url?: string;
      remedy?: ClaudeWebRemedy;
    },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.remedy = options?.remedy ?? REMEDY[reason];
    this.url = options?.url;
  }

  /** Every reason except a refused decision can be retried after the user fixed the cause. */
  get retryable(): boolean {
    return this.reason !== 'decision_not_delivered';
  }
}

/**
 * The ClaudeWebError behind a failure from this backend or from a poll over its transport (the
 * error itself or one of its causes), if any.
 */
export function claudeWebFailureOf(err: unknown): ClaudeWebError | undefined {
  let current: unknown = err;
  // Bounded: a cause chain is short (poll error -> SessionsError -> ClaudeWebError).
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current instanceof ClaudeWebError) return current;
    current = current.cause;
  }
  return undefined;
}

export const RUN_CLAUDE_FIX = 'Run `claude` once in a terminal (log in with your Claude.ai account if it asks), then choose Retry.';
