// Setting the server's URL is all a person does: the server publishes, without a token, the issuer,
// the client and the scopes to sign in with; the extension's sign-in (src/client/auth) reads them,
// signs in on a real OpenID provider's own pages, and the server takes the token it got.
import assert from 'node:assert/strict';
import { fetchAuthMetadata } from '../../../src/client/auth/authMetadataRequest';
import { AUTH_METADATA_PATH } from '../../../src/core/authMetadata';
import { startOpenidProvider, TEST_API_SCOPE, TEST_AUDIENCE, TEST_CLIENT_ID, type OpenidProvider } from '../../support/openidProvider';
import { signInAs } from '../../support/providerSignIn';
import { startServer, type ServerProcess } from '../../support/serverProcess';

describe('a team server publishes how to sign in to it (a real OpenID provider)', function () {
  this.timeout(90_000);
  let provider: OpenidProvider;
  let server: ServerProcess;
  let tokenOnly: ServerProcess;

  before(async () => {
    provider = await startOpenidProvider();
    const oidc = ['--oidc-issuer', provider.issuer, '--oidc-audience', TEST_AUDIENCE];
    [server, tokenOnly] = await Promise.all([
      startServer({
        token: null,
        env: { ULTRAPLAN_SERVER_TOKEN: '' },
        extraArgs: [
          ...oidc,
          '--oidc-client-id',
          TEST_CLIENT_ID,
          '--oidc-scopes',
          `openid offline_access email profile groups ${TEST_API_SCOPE}`,
        ],
      }),
      startServer({ extraArgs: oidc }),
    ]);
  });
  after(async () => {
    await Promise.all([server?.stop(), tokenOnly?.stop()]);
    await provider?.close();
  });

  it('answers the metadata without a token; signing in with it gives a token the server takes', async () => {
    const metadata = await fetchAuthMetadata(server.url);
    assert.deepEqual(metadata, {
      issuer: provider.issuer,
      client_id: TEST_CLIENT_ID,
      scopes: ['openid', 'offline_access', 'email', 'profile', 'groups', TEST_API_SCOPE],
      resource: TEST_AUDIENCE,
      device_authorization: false,
    });
    const unauthenticated = await fetch(`${server.url}/v1/sessions`);
    assert.equal(unauthenticated.status, 401);
    await unauthenticated.body?.cancel();

    const tokens = await signInAs(metadata, 'alice');
    const listed = await fetch(`${server.url}/v1/sessions`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(listed.status, 200, await listed.clone().text());
    assert.deepEqual((await listed.json()).data, []);
  });

  it('a server that offers no sign-in says so, and the route takes GET only', async () => {
    await assert.rejects(fetchAuthMetadata(tokenOnly.url), /offers no sign-in/);
    const posted = await fetch(`${server.url}${AUTH_METADATA_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(posted.status, 405);
    await posted.body?.cancel();
  });
});
