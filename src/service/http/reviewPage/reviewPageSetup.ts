// The review page's routes as a server is configured: its browser state where the store keeps it
// (PostgreSQL: shared by every replica; otherwise this process's memory), the issuer's sign-in
// when the server has one (--oidc-client-id), which also renews a signed-in browser's groups, and
// the public origin (--public-url).
import { BrowserSignIn } from '../../identity/browserSignIn';
import { MemoryBrowserState } from '../../identity/browserState';
import { OidcAuthenticator } from '../../identity/oidcAuthenticator';
import type { RequestAuthenticator } from '../../identity/authenticator';
import type { ServerStore } from '../../store/serverStore';
import { BrowserSessions } from './browserSessions';
import { ReviewPageRoutes, type ReviewPageOptions } from './reviewPageRoutes';

export function reviewPageRoutesFor(
  authenticator: RequestAuthenticator,
  store: Pick<ServerStore, 'browserState'>,
  publicOrigin: string | undefined,
  options: ReviewPageOptions = {},
): ReviewPageRoutes {
  const state = options.sessions?.store ?? store.browserState ?? new MemoryBrowserState();
  const metadata = authenticator.signInMetadata?.() ?? null;
  const signIn =
    metadata && authenticator instanceof OidcAuthenticator
      ? new BrowserSignIn({ metadata, verify: (token) => authenticator.verify(token), state })
      : undefined;
  return new ReviewPageRoutes({
    sessions: new BrowserSessions({ store: state, ...(signIn ? { renew: (refreshToken: string) => signIn.renew(refreshToken) } : {}) }),
    ...(signIn ? { signIn } : {}),
    publicOrigin,
    ...options,
  });
}
