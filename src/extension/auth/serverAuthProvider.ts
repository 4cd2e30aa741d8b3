// The "Ultraplan Server" account in VS Code's Accounts menu: one session per team server, signed
// in with the server's OpenID issuer. Tokens live in SecretStorage (one entry per server origin;
// the list of origins, which is not secret, in globalState). Each server's TokenKeeper renews the
// access token before it expires; signing out revokes at the issuer, then forgets. The OAuth code
// (openid-client) is a chunk of its own, loaded at the first sign-in, renewal or sign-out.
import * as vscode from 'vscode';
import { TokenKeeper, type TokenStore } from '../../client/auth/tokenKeeper';
import { StoredTokensSchema, type StoredTokens } from '../../client/auth/tokens';
import { SERVER_AUTH_PROVIDER_ID, SIGN_IN_COMMAND, markServerAuthRegistered, serverScope } from './serverAuthId';
import { errorMessage } from '../../core/errors';

const ORIGINS_KEY = 'ultraplan.auth.origins';
const tokensKey = (origin: string) => `ultraplan.auth.tokens:${origin}`;
const loadFlow = () => import('./signInFlow');

/** Registers the provider (activate() loads this chunk after the first load, and registers the command itself). */
export function registerServerAuth(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): vscode.Disposable {
  const provider = new ServerAuthProvider(context, log);
  const registration = vscode.authentication.registerAuthenticationProvider(SERVER_AUTH_PROVIDER_ID, 'Ultraplan Server', provider, {
    supportsMultipleAccounts: false,
  });
  markServerAuthRegistered();
  return vscode.Disposable.from(provider, registration);
}

/** Sign In to Server…: to `ultraplan.server.url`, through VS Code's own consent and the Accounts menu. */
export async function signInToServer(): Promise<void> {
  const serverUrl = vscode.workspace.getConfiguration('ultraplan').get<string>('server.url', '');
  if (!serverUrl) {
    void vscode.window.showWarningMessage('Set "ultraplan.server.url" to your team server first.');
    return;
  }
  await vscode.authentication.getSession(SERVER_AUTH_PROVIDER_ID, [serverScope(serverUrl)], { createIfNone: true });
}

class ServerAuthProvider implements vscode.AuthenticationProvider, vscode.Disposable {
  private readonly changes = new vscode.EventEmitter<vscode.AuthenticationProviderAuthenticationSessionsChangeEvent>();
  readonly onDidChangeSessions = this.changes.event;
  private readonly keepers = new Map<string, Promise<TokenKeeper>>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async getSessions(scopes: readonly string[] | undefined): Promise<vscode.AuthenticationSession[]> {
    const wanted = scopes?.find((s) => s.startsWith('server:'))?.slice('server:'.length);
    const origins = wanted ? this.origins().filter((o) => o === wanted) : this.origins();
    const sessions = await Promise.all(
      origins.map(async (origin) => {
        const keeper = await this.keeper(origin);
        try {
          const accessToken = await keeper.accessToken();
          return accessToken && keeper.current ? sessionOf(origin, keeper.current, accessToken) : undefined;
        } catch (err) {
          this.log.warn(`sign-in: ${origin}: ${errorMessage(err)}`);
          return undefined;
        }
      }),
    );
    return sessions.filter((s): s is vscode.AuthenticationSession => s !== undefined);
  }

  async createSession(scopes: readonly string[]): Promise<vscode.AuthenticationSession> {
    const named = scopes.find((s) => s.startsWith('server:'))?.slice('server:'.length);
    const serverUrl = named ?? vscode.workspace.getConfiguration('ultraplan').get<string>('server.url', '');
    if (!serverUrl) throw new Error('No team server: set "ultraplan.server.url".');
    const origin = new URL(serverUrl).origin;
    const { signIn } = await loadFlow();
    const tokens = await signIn(serverUrl, this.log);
    const keeper = await this.keeper(origin);
    await keeper.adopt(tokens);
    await this.context.globalState.update(ORIGINS_KEY, [...new Set([...this.origins(), origin])]);
    this.log.info(`sign-in: signed in to ${origin} as ${tokens.account.label}`);
    return sessionOf(origin, tokens, tokens.access_token);
  }

  async removeSession(sessionId: string): Promise<void> {
    const origin = sessionId;
    const keeper = await this.keeper(origin);
    const tokens = keeper.current;
    if (tokens) {
      try {
        const { revoke } = await loadFlow();
        await revoke(tokens);
      } catch (err) {
        // Signed out here either way; the issuer's tokens then last until they expire.
        this.log.warn(`sign-in: revoking the tokens for ${origin} failed: ${errorMessage(err)}`);
      }
    }
    await keeper.forget();
    await this.context.globalState.update(
      ORIGINS_KEY,
      this.origins().filter((o) => o !== origin),
    );
    this.log.info(`sign-in: signed out of ${origin}`);
  }

  dispose(): void {
    for (const keeper of this.keepers.values()) void keeper.then((k) => k.dispose());
    this.changes.dispose();
  }

  /**
   * The issuer refused to renew (the person's grant revoked, the refresh token expired): said once,
   * with the way back in. Nothing signs in again on its own; requests to the server fail with
   * "nobody is signed in" until the person does.
   */
  private async signInEnded(origin: string, reason: string): Promise<void> {
    await this.context.globalState.update(
      ORIGINS_KEY,
      this.origins().filter((o) => o !== origin),
    );
    const again = 'Sign In…';
    const choice = await vscode.window.showWarningMessage(
      `Signed out of ${origin}: its issuer refused to renew the sign-in (${reason}). Sign in again to keep reviewing on that server.`,
      again,
    );
    if (choice === again) await vscode.commands.executeCommand(SIGN_IN_COMMAND);
  }

  private origins(): string[] {
    const value = this.context.globalState.get<unknown>(ORIGINS_KEY);
    return Array.isArray(value) ? value.filter((o): o is string => typeof o === 'string') : [];
  }

  private keeper(origin: string): Promise<TokenKeeper> {
    let keeper = this.keepers.get(origin);
    if (!keeper) {
      let previous: StoredTokens | undefined;
      const made = new TokenKeeper({
        store: this.store(origin),
        renew: async (tokens) => (await loadFlow()).renew(tokens),
        log: (line) => this.log.info(`${origin}: ${line}`),
        onEnded: (reason) =>
          void this.signInEnded(origin, reason).catch((err: unknown) => this.log.warn(`sign-in: ${origin}: ${errorMessage(err)}`)),
        onChange: (tokens) => {
          const before = previous;
          previous = tokens;
          if (tokens) {
            const session = sessionOf(origin, tokens, tokens.access_token);
            this.changes.fire(before ? { added: [], removed: [], changed: [session] } : { added: [session], removed: [], changed: [] });
          } else if (before) {
            this.changes.fire({ added: [], removed: [sessionOf(origin, before, before.access_token)], changed: [] });
          }
        },
      });
      keeper = made.start().then((tokens) => {
        previous = tokens;
        return made;
      });
      this.keepers.set(origin, keeper);
      keeper.catch(() => this.keepers.delete(origin));
    }
    return keeper;
  }

  private store(origin: string): TokenStore {
    const secrets = this.context.secrets;
    return {
      load: async () => {
        const text = await secrets.get(tokensKey(origin));
        if (!text) return undefined;
        const parsed = StoredTokensSchema.safeParse(safeJson(text));
        if (!parsed.success) this.log.warn(`sign-in: the stored sign-in for ${origin} is unreadable; sign in again`);
        return parsed.success ? parsed.data : undefined;
      },
      save: (tokens) => Promise.resolve(secrets.store(tokensKey(origin), JSON.stringify(tokens))),
      clear: () => Promise.resolve(secrets.delete(tokensKey(origin))),
    };
  }
}

/** The session's id is the server's origin: one sign-in per server. */
function sessionOf(origin: string, tokens: StoredTokens, accessToken: string): vscode.AuthenticationSession {
  return {
    id: origin,
    accessToken,
    account: { id: tokens.account.id, label: tokens.account.label },
    scopes: [serverScope(origin), ...(tokens.scope?.split(' ') ?? [])],
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
