// The sign-in as a person sees it in VS Code, over the vscode-free OAuth client: the server's
// metadata says which issuer; the code flow opens the system browser and waits on a loopback
// port; where a browser cannot reach back to this machine (code-server, a remote window whose
// forwarded address is not a loopback one) the device code is shown instead, when the issuer
// and the server offer it. Loaded with the OAuth client at the first sign-in, renewal or sign-out.
import * as vscode from 'vscode';
import { fetchAuthMetadata } from '../../client/auth/authMetadataRequest';
import { CALLBACK_PATH } from '../../client/auth/loopbackRedirect';
import { OAuthClient } from '../../client/auth/oauthClient';
import type { StoredTokens } from '../../client/auth/tokens';
import { isLoopbackHost } from '../../core/authMetadata';

export async function signIn(serverUrl: string, log: vscode.LogOutputChannel): Promise<StoredTokens> {
  const origin = new URL(serverUrl).origin;
  const metadata = await fetchAuthMetadata(serverUrl);
  const client = await OAuthClient.discover(metadata);
  const deviceOffered = metadata.device_authorization === true && client.offersDeviceFlow;
  const reachesBack = await browserReachesLoopback();
  log.info(`sign-in: ${origin} through ${metadata.issuer} (${reachesBack || !deviceOffered ? 'browser' : 'device code'})`);
  if (!reachesBack && deviceOffered) return deviceSignIn(client, metadata.scopes, origin);
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Signing in to ${origin}: finish in your browser…`, cancellable: true },
    (_progress, token) =>
      client.signInWithBrowser({
        scopes: metadata.scopes,
        signal: abortSignalOf(token),
        openBrowser: async (url) => {
          if (!(await vscode.env.openExternal(vscode.Uri.parse(url.href, true)))) throw new Error('the browser could not be opened');
        },
        externalRedirect: async (redirectUri) => (await vscode.env.asExternalUri(vscode.Uri.parse(redirectUri, true))).toString(true),
      }),
  );
}

export async function renew(tokens: StoredTokens): Promise<StoredTokens> {
  return (await OAuthClient.discover(tokens)).refresh(tokens);
}

export async function revoke(tokens: StoredTokens): Promise<void> {
  await (await OAuthClient.discover(tokens)).revoke(tokens);
}

/**
 * Whether a browser on the person's machine can reach a loopback listener of this extension host
 * at an address an issuer takes as a native app's redirect (RFC 8252 7.3: any port, the path as
 * registered): a local window, or a desktop window on a remote whose forwarding only moves the
 * port (Remote-SSH). In a browser (code-server, vscode.dev) the page runs on another machine than
 * this host, and code-server forwards through a path of its own (`/proxy/<port>/…`) that no issuer
 * registers, so the device code is the way in there.
 */
async function browserReachesLoopback(): Promise<boolean> {
  if (vscode.env.uiKind === vscode.UIKind.Web) return false;
  if (vscode.env.remoteName === undefined) return true;
  const probe = await vscode.env.asExternalUri(vscode.Uri.parse(LOOPBACK_PROBE));
  return probe.scheme === 'http' && isLoopbackHost(probe.authority.replace(/:\d+$/, '')) && probe.path === CALLBACK_PATH;
}

const LOOPBACK_PROBE = `http://127.0.0.1:65535${CALLBACK_PATH}`;

async function deviceSignIn(client: OAuthClient, scopes: string[], origin: string): Promise<StoredTokens> {
  const device = await client.startDeviceSignIn(scopes);
  const page = device.verificationUriComplete ?? device.verificationUri;
  const open = 'Copy Code and Open Browser';
  void vscode.window
    .showInformationMessage(`To sign in to ${origin}, enter the code ${device.userCode} at ${device.verificationUri}.`, open)
    .then(async (choice) => {
      if (choice !== open) return;
      await vscode.env.clipboard.writeText(device.userCode);
      await vscode.env.openExternal(vscode.Uri.parse(page, true));
    });
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Signing in to ${origin}: enter ${device.userCode} at ${device.verificationUri}`,
      cancellable: true,
    },
    (_progress, token) => device.complete(abortSignalOf(token)),
  );
}

function abortSignalOf(token: vscode.CancellationToken): AbortSignal {
  const controller = new AbortController();
  if (token.isCancellationRequested) controller.abort();
  else token.onCancellationRequested(() => controller.abort());
  return controller.signal;
}
