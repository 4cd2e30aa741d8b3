// Reads Claude Code's claude.ai login where Claude Code keeps it (docs/protocol.md section 9). Read-only
// by design: refreshing would rotate the refresh token and log Claude Code out, so an expired
// login sends the user to `claude`, which refreshes it. Callers read again before every request,
// since Claude Code may have refreshed the file meanwhile. No token ever reaches a message.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
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
  /** Claude Code's config folder; default $CLAUDE_CONFIG_DIR, else ~/.claude. Its login may live elsewhere: see secureStorageDir. */
  configDir?: string;
  env?: Env;
  homeDir?: string;
  platform?: NodeJS.Platform;
  now?: () => number;
  /** The Keychain entry's text, or undefined when there is none. Default: the `security` tool. */
  readKeychain?: (service: string, account: string) => Promise<string | undefined>;
}

export function claudeConfigDir(options: Pick<CredentialsOptions, 'configDir' | 'env' | 'homeDir'> = {}): string {
  const env = options.env ?? process.env;
  return options.configDir ?? env.CLAUDE_CONFIG_DIR ?? join(options.homeDir ?? homedir(), '.claude');
}

/**
 * Where Claude Code keeps its login: $CLAUDE_SECURESTORAGE_CONFIG_DIR when set (set but empty:
 * ~/.claude), else the config folder.
 */
export function secureStorageDir(options: Pick<CredentialsOptions, 'configDir' | 'env' | 'homeDir'> = {}): string {
  const env = options.env ?? process.env;
  const secure = env.CLAUDE_SECURESTORAGE_CONFIG_DIR;
  if (secure !== undefined) return (secure || join(options.homeDir ?? homedir(), '.claude')).normalize('NFC');
  return claudeConfigDir(options);
}

export function credentialsFilePath(options: Pick<CredentialsOptions, 'configDir' | 'env' | 'homeDir'> = {}): string {
  return join(secureStorageDir(options), '.credentials.json');
}

/**
 * The macOS Keychain service: `Claude Code-credentials`, plus `-<first 8 hex of sha256(folder)>`
 * when the login's folder is not the default (CLAUDE_SECURESTORAGE_CONFIG_DIR set and not empty,
 * or, without it, a config folder set).
 */
export function keychainService(options: Pick<CredentialsOptions, 'configDir' | 'env' | 'homeDir'> = {}): string {
  const env = options.env ?? process.env;
  const secure = env.CLAUDE_SECURESTORAGE_CONFIG_DIR;
  const isDefault = secure !== undefined ? secure === '' : options.configDir === undefined && env.CLAUDE_CONFIG_DIR === undefined;
  if (isDefault) return KEYCHAIN_SERVICE;
  const folder = secure !== undefined ? secure.normalize('NFC') : claudeConfigDir(options);
  return `${KEYCHAIN_SERVICE}-${createHash('sha256').update(folder).digest('hex').slice(0, 8)}`;
}

/** The Keychain account: the user name when it is a plain name, as Claude Code writes it. */
function keychainAccount(env: Env): string {
  let name: string;
  try {
    name = env.USER || userInfo().username;
  } catch {
    name = 'claude-code-user';
  }
  return /^[a-zA-Z0-9._-]+$/.test(name) ? name : 'claude-code-user';
}

/** Why CLAUDE_CODE_OAUTH_TOKEN cannot start cloud sessions, and what to do. */
export const OAUTH_TOKEN_ENV_NOTE =
  'CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`) carries only the user:inference scope, so it cannot start or follow cloud sessions';

/**
 * The login to use now. Throws ClaudeWebError: not_logged_in, credentials_malformed,
 * missing_scope, token_expired.
 */
export async function readClaudeCredentials(options: CredentialsOptions = {}): Promise<ClaudeCredentials> {
  const env = options.env ?? process.env;
  const now = (options.now ?? Date.now)();
  const envToken = env.CLAUDE_CODE_OAUTH_TOKEN?.trim();
  // The environment token is a sessions login only when its scopes were widened to include it.
  const envScopes = env.CLAUDE_CODE_OAUTH_SCOPES?.split(/[\s,]+/).filter(Boolean);
  if (envToken && envScopes?.includes(SESSIONS_SCOPE)) {
    return {
      accessToken: envToken,
      expiresAt: undefined,
      scopes: envScopes,
      subscriptionType: undefined,
      source: 'env',
      from: 'CLAUDE_CODE_OAUTH_TOKEN',
      expiresSoon: false,
    };
  }

  const platform = options.platform ?? process.platform;
  if (platform === 'darwin') {
    const service = keychainService(options);
    const text = await (options.readKeychain ?? readKeychainEntry)(service, keychainAccount(env));
    if (text !== undefined) return fromStoredJson(text, 'keychain', `the macOS Keychain entry "${service}"`, now);
  }

  const path = credentialsFilePath(options);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      if (envToken) {
        throw new ClaudeWebError(
          'missing_scope',
          `${OAUTH_TOKEN_ENV_NOTE}, and Claude Code has no Claude.ai login stored on this machine (no ${path}). Run \`claude\`, use /login with your Claude.ai account (the stored login is used; the variable can stay for other tools), then choose Retry.`,
        );
      }
      throw new ClaudeWebError(
        'not_logged_in',
        `Claude Code is not logged in with a Claude.ai account on this machine (no ${path}). ${RUN_CLAUDE_FIX}`,
      );
    }
    throw new ClaudeWebError(
      'credentials_malformed',
      `Claude Code's login in ${path} could not be read (${code ?? 'error'}). ${RUN_CLAUDE_FIX}`,
    );
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
    throw new ClaudeWebError(
      'credentials_malformed',
      `Claude Code's login in ${from} is not in the form Claude Code writes${where}. ${RUN_CLAUDE_FIX}`,
    );
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
function readKeychainEntry(service: string, account: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    execFile(
      'security',
      ['find-generic-password', '-s', service, '-a', account, '-w'],
      { timeout: 10_000, maxBuffer: 1 << 20, encoding: 'utf8' },
      (err, stdout) => {
        if (!err) {
          resolve(stdout.trim());
          return;
        }
        const code: unknown = (err as { code?: unknown }).code;
        if (code === 44) resolve(undefined);
        else if (code === 'ENOENT')
          resolve(undefined); // no `security` tool: fall back to the file
        else {
          // stderr may name the item, never the secret; still, keep the message our own.
          reject(
            new ClaudeWebError(
              'credentials_malformed',
              `The macOS Keychain entry "${service}" could not be read (security exited with ${String(code)}). ${RUN_CLAUDE_FIX}`,
            ),
          );
        }
      },
    );
  });
}
