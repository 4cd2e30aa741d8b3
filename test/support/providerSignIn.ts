// A person signing in with the extension's OAuth client (src/client/auth) on the tests' OpenID
// provider: the client opens the authorization URL, and a scripted browser fills in the
// provider's own login and consent pages as that person.
import type { AuthMetadata } from '../../src/core/authMetadata';
import { OAuthClient } from '../../src/client/auth/oauthClient';
import type { StoredTokens } from '../../src/client/auth/tokens';
import { TEST_USERS } from './openidProvider';
import { ScriptedBrowser } from './scriptedBrowser';

export async function signInAs(metadata: AuthMetadata, login: keyof typeof TEST_USERS): Promise<StoredTokens> {
  const client = await OAuthClient.discover(metadata);
  const browser = new ScriptedBrowser();
  return client.signInWithBrowser({
    scopes: metadata.scopes,
    timeoutMs: 30_000,
    openBrowser: async (url) => {
      void browser.open(url.href).then(async (page) => {
        const consent = await browser.submit(page, 'login', { login, password: TEST_USERS[login]?.password ?? '' });
        await browser.submit(consent, 'consent');
      });
    },
  });
}
