// Reads Claude Code's claude.ai login where Claude Code keeps it (PROTOCOL.md section 9). Read-only
// by design: refreshing would rotate the refresh token and log Claude Code out, so an expired
// login sends the user to `claude`, which refreshes it. Callers read again before every request,
// since Claude Code may have refreshed the file meanwhile. No token ever reaches a message.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { ClaudeWebError, RUN_CLAUDE_FIX } from './errors';

export const SESSIONS_SCOPE = 'user:sessions:claude_code';
export const KEYCHAIN_SERVICE = 'Claude Code-credentials';
/** Claude Code refreshes this long before expiresAt; inside the window the token still works. */
export const EXPIRY_WINDOW_MS = 5 * 60_000;

const OauthSchema = z.looseObject({
  accessToken: z.string().min(1),
  refreshToken: z.string().optional(),
  expiresAt: z.number().nullable().optional(),
  scopes: z.array(z.string()).nullable().optional(),
  subscriptionType: z.string().nullable().optional(),
});

const CredentialsFileSchema = z.looseObject({ claudeAiOauth: OauthSchema.optional() });

export type CredentialsSource = 'env' | 'keychain' | 'file';

export interface ClaudeCredentials {
  readonly accessToken: string;
  /** Epoch ms; undefined for CLAUDE_CODE_OAUTH_TOKEN, which carries none. */
  readonly expiresAt: number | undefined;
  readonly scopes: readonly string[] | undefined;
  readonly subscriptionType: string | undefined;
  readonly source: CredentialsSource;
  /** For people: "CLAUDE_CODE_OAUTH_TOKEN", "the macOS Keychain", the file's path. */
  readonly from: string;
  /** Within 5 minutes of expiresAt: still usable, but Claude Code is about to refresh it. */
  readonly expiresSoon: boolean;
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface CredentialsOptions {
  /** Claude Code's config folder; default $CLAUDE_CONFIG_DIR, else ~/.claude. */
  configDir?: string;
  env?: Env;
  homeDir?: string;
  platform?: NodeJS.Platform;
  now?: () => number;
  /** The Keychain entry's text, or undefined when there is none. Default: the `security` tool. */
  readKeychain?: (account: string) => Promise<string | undefined>;
}

export function claudeConfigDir(options: Pick<CredentialsOptions, 'configDir' | 'env' | 'homeDir'> = {}): string {
  const env = options.env ?? process.env;
  return options.configDir ?? env.CLAUDE_CONFIG_DIR ?? join(options.homeDir ?? homedir(), '.claude');
}

export function credentialsFilePath(options: Pick<CredentialsOptions, 'configDir' | 'env' | 'homeDir'> = {}): string {
  return join(claudeConfigDir(options), '.credentials.json');
}

/**
 * The login to use now. Throws ClaudeWebError: not_logged_in, credentials_malformed,
 * missing_scope, token_expired.
 */
export async function readClaudeCredentials(options: CredentialsOptions = {}): Promise<ClaudeCredentials> {
  const env = options.env ?? process.env;
  const now = (options.now ?? Date.now)();
  // Claude Code itself gives the environment variable precedence over the stored login.
  const envToken = env.CLAUDE_CODE_OAUTH_TOKEN?.trim();
  if (envToken) {
    return {
      accessToken: envToken,
      expiresAt: undefined,
      scopes: undefined,
      subscriptionType: undefined,
      source: 'env',
      from: 'CLAUDE_CODE_OAUTH_TOKEN',
      expiresSoon: false,
    };
  }

  const platform = options.platform ?? process.platform;
  if (platform === 'darwin') {
    const account = env.USER ?? userInfo().username;
    const text = await (options.readKeychain ?? readKeychainEntry)(account);
    if (text !== undefined) return fromStoredJson(text, 'keychain', 'the macOS Keychain entry "Claude Code-credentials"', now);
  }

  const path = credentialsFilePath(options);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ClaudeWebError(
        'not_logged_in',
        `Claude Code is not logged in with a Claude.ai account on this machine (no ${path}). ${RUN_CLAUDE_FIX}`,
      );
    }
    throw new ClaudeWebError('credentials_malformed', `Claude Code's login in ${path} could not be read (${code ?? 'error'}). ${RUN_CLAUDE_FIX}`);
  }
  return fromStoredJson(text, 'file', path, now);
}

function fromStoredJson(text: string, source: CredentialsSource, from: string, now: number): ClaudeCredentials {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which holds the token: say only where.
    throw new ClaudeWebError('credentials_malformed', `Claude Code's login in ${from} is not valid JSON. ${RUN_CLAUDE_FIX}`);
  }
  const parsed = CredentialsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` (field ${issue.path.join('.')})` : '';
    throw new ClaudeWebError('credentials_malformed', `Claude Code's login in ${from} is not in the form Claude Code writes${where}. ${RUN_CLAUDE_FIX}`);
  }
  const oauth = parsed.data.claudeAiOauth;
  if (!oauth) {
    throw new ClaudeWebError(
      'not_logged_in',
      `Claude Code is not logged in with a Claude.ai account (${from} holds no claude.ai login; an API key cannot start remote sessions). ${RUN_CLAUDE_FIX}`,
    );
  }
  const scopes = oauth.scopes ?? undefined;
  if (scopes && !scopes.includes(SESSIONS_SCOPE)) {
    throw new ClaudeWebError(
      'missing_scope',
      `Claude Code's login cannot start remote sessions (it lacks the scope ${SESSIONS_SCOPE}; it is probably a Console or long-lived token login). Run \`claude\`, use /login with your Claude.ai account, then choose Retry.`,
    );
  }
  const expiresAt = oauth.expiresAt ?? undefined;
  if (expiresAt !== undefined && expiresAt <= now) {
    throw new ClaudeWebError(
      'token_expired',
      `Claude Code's login expired ${describeAgo(now - expiresAt)} (Ultraplan never refreshes it, so Claude Code stays logged in). ${RUN_CLAUDE_FIX}`,
    );
  }
  return {
    accessToken: oauth.accessToken,
    expiresAt,
    scopes,
    subscriptionType: oauth.subscriptionType ?? undefined,
    source,
    from,
    expiresSoon: expiresAt !== undefined && expiresAt - now <= EXPIRY_WINDOW_MS,
  };
}

function describeAgo(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

/** The `security` tool, without a shell. Exit 44 means no such item. */
function readKeychainEntry(account: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    execFile(
      'security',
      ['find-generic-password', '-s', KEYCHAIN_SERVICE, '-a', account, '-w'],
      { timeout: 10_000, maxBuffer: 1 << 20, encoding: 'utf8' },
      (err, stdout) => {
        if (!err) {
          resolve(stdout.trim());
          return;
        }
        const code: unknown = (err as { code?: unknown }).code;
        if (code === 44) resolve(undefined);
        else if (code === 'ENOENT') resolve(undefined); // no `security` tool: fall back to the file
        else {
          // stderr may name the item, never the secret; still, keep the message our own.
          reject(new ClaudeWebError('credentials_malformed', `The macOS Keychain entry "${KEYCHAIN_SERVICE}" could not be read (security exited with ${String(code)}). ${RUN_CLAUDE_FIX}`));
        }
      },
    );
  });
}
