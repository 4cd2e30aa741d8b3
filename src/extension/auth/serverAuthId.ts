// The authentication provider's id and how a server is named among a session's scopes: what the
// rest of the extension needs to ask VS Code for a sign-in, without loading the sign-in code.
import * as vscode from 'vscode';

export const SERVER_AUTH_PROVIDER_ID = 'ultraplan-server';
export const SIGN_IN_COMMAND = 'ultraplan.signInToServer';

let providerRegistered = false;

/** Called once the provider is registered (it loads after activation, as a chunk of its own). */
export function markServerAuthRegistered(): void {
  providerRegistered = true;
}

/** The scope that names the server a session is for: `server:<origin>`. */
export function serverScope(serverUrl: string): string {
  return `server:${new URL(serverUrl).origin}`;
}

/**
 * The signed-in person's access token for this server (renewed when due), or undefined when
 * nobody signed in to it: the caller falls back to a pasted token.
 */
export async function signedInToken(serverUrl: string): Promise<string | undefined> {
  // Before the provider is registered VS Code would wait for it: a server request must never.
  if (!providerRegistered) return undefined;
  const session = await vscode.authentication.getSession(SERVER_AUTH_PROVIDER_ID, [serverScope(serverUrl)], { silent: true });
  return session?.accessToken;
}
