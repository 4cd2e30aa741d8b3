// The OIDC authenticator in process, against the issuer stand-in on 127.0.0.1: what it makes of a
// token's claims, how it finds the keys (discovery, or a configured JWKS URL), and what an issuer
// that cannot be read or names another issuer gives (503, retried, never a pass). The settings
// parser and the visibility rule, which every route and both stores share, are pure.
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SessionsError } from '../../../src/core/errors';
import { AuthenticationError } from '../../../src/service/identity/authenticator';
import { OidcAuthenticator, type OidcSettings } from '../../../src/service/identity/oidcAuthenticator';
import { oidcSettingsFrom } from '../../../src/service/identity/oidcOptions';
import { isVisible, visibilityOf, type Principal, type SessionOwner } from '../../../src/service/identity/sessionOwner';
import { startOidcIssuer, type OidcIssuer } from '../../support/oidcIssuer';

describe('OidcAuthenticator', function () {
  this.timeout(20_000);
  let issuer: OidcIssuer;
  before(async () => {
    issuer = await startOidcIssuer({ alg: 'ES256' });
  });
  after(() => issuer.close());

  const settings = (over: Partial<OidcSettings> = {}): OidcSettings => ({
    issuer: issuer.url,
    audience: issuer.audience,
    jwksUrl: null,
    groupsClaim: 'groups',
    reviewGroups: ['reviewers'],
    adminGroup: 'admins',
    clockSkewSeconds: 0,
    ...over,
  });

  it('reads the user, a display name and the groups from the claims, parsed once', async () => {
    const auth = new OidcAuthenticator(settings());
    const token = await issuer.token('u1', { email: 'u1@example.com', name: 'U One', groups: ['reviewers', 'dev', 'dev'] });
    assert.deepEqual(await auth.verify(token), {
      kind: 'user',
      sub: 'u1',
      name: 'u1@example.com',
      groups: ['reviewers', 'dev'],
      reviewGroups: ['reviewers'],
      admin: false,
    });
    const admin = await auth.verify(await issuer.token('u2', { groups: 'admins' }));
    assert.equal(admin.admin, true);
    assert.equal(admin.name, null);
  });

  it('takes the groups from a namespaced claim or a dotted path, and refuses a groups claim that is no list of names', async () => {
    const namespaced = new OidcAuthenticator(settings({ groupsClaim: 'https://example.com/groups' }));
    assert.deepEqual((await namespaced.verify(await issuer.token('u', { 'https://example.com/groups': ['reviewers'] }))).groups, [
      'reviewers',
    ]);
    const nested = new OidcAuthenticator(settings({ groupsClaim: 'realm_access.roles' }));
    assert.deepEqual((await nested.verify(await issuer.token('u', { realm_access: { roles: ['admins'] } }))).admin, true);
    await assert.rejects(nested.verify(await issuer.token('u', { realm_access: { roles: [{ name: 'admins' }] } })), AuthenticationError);
  });

  it('refuses a token without sub or exp', async () => {
    const auth = new OidcAuthenticator(settings());
    await assert.rejects(auth.verify(await issuer.token('', {})), /"sub"|sub/);
    await assert.rejects(auth.verify(await issuer.token('u', { exp: undefined })), /"exp" claim/);
  });

  it('reads the keys from a configured JWKS URL without asking for discovery', async () => {
    const before = issuer.requests.filter((p) => p.includes('openid-configuration')).length;
    const auth = new OidcAuthenticator(settings({ jwksUrl: issuer.jwksUrl }));
    assert.equal((await auth.verify(await issuer.token('u'))).sub, 'u');
    assert.equal(issuer.requests.filter((p) => p.includes('openid-configuration')).length, before);
  });

  it('an issuer whose discovery fails or names another issuer is a 503, retried by the next request', async () => {
    let answer: 'broken' | 'impostor' | 'fine' = 'broken';
    let proxied = '';
    const proxy = http.createServer((req, res) => {
      if (answer === 'broken') return res.writeHead(500).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer: answer === 'impostor' ? 'https://evil.example' : proxied, jwks_uri: issuer.jwksUrl }));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      // The stand-in's tokens name the real issuer; discovery is asked of the proxy's address.
      proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const auth = new OidcAuthenticator(settings({ issuer: proxied }));
      const token = await issuer.token('u', {}, { issuer: proxied });
      const unavailable = (err: unknown) => err instanceof SessionsError && err.status === 503;
      await assert.rejects(auth.verify(token), unavailable);
      answer = 'impostor';
      await assert.rejects(auth.verify(token), (err) => unavailable(err) && /names issuer https:\/\/evil/.test((err as Error).message));
      answer = 'fine';
      assert.equal((await auth.verify(token)).sub, 'u');
    } finally {
      proxy.close();
    }
  });
});

describe('OIDC settings and who sees what', () => {
  it('reads flags before the environment, and refuses what would not work', () => {
    const env = {
      ULTRAPLAN_OIDC_ISSUER: 'https://id.example.com',
      ULTRAPLAN_OIDC_AUDIENCE: 'ultraplan',
      ULTRAPLAN_OIDC_REVIEW_GROUPS: ' a, b ,,',
    };
    assert.deepEqual(oidcSettingsFrom({ 'oidc-admin-group': 'root' }, env), {
      issuer: 'https://id.example.com',
      audience: 'ultraplan',
      jwksUrl: null,
      groupsClaim: 'groups',
      reviewGroups: ['a', 'b'],
      adminGroup: 'root',
      clockSkewSeconds: 60,
    });
    assert.equal(oidcSettingsFrom({}, {}), null);
    assert.throws(() => oidcSettingsFrom({ 'oidc-audience': 'x' }, {}), /needs --oidc-issuer/);
    assert.throws(() => oidcSettingsFrom({ 'oidc-issuer': 'https://id.example.com' }, {}), /needs --oidc-audience/);
    assert.throws(() => oidcSettingsFrom({ 'oidc-issuer': 'http://id.example.com', 'oidc-audience': 'x' }, {}), /https:\/\//);
    assert.throws(() => oidcSettingsFrom({ ...env, 'oidc-clock-skew-seconds': '3600' }, env), /0 to 600/);
    assert.equal(oidcSettingsFrom({ 'oidc-issuer': 'http://127.0.0.1:9/', 'oidc-audience': 'x' }, {})?.issuer, 'http://127.0.0.1:9/');
  });

  it('a session is visible to its owner, to members of a review group the owner is in, and to admins only', () => {
    const owner: SessionOwner = { sub: 'alice', name: null, groups: ['reviewers', 'dev'] };
    const user = (sub: string, reviewGroups: string[], admin = false): Principal => ({
      kind: 'user',
      sub,
      name: null,
      groups: reviewGroups,
      reviewGroups,
      admin,
    });
    assert.equal(isVisible(visibilityOf(user('alice', [])), owner), true);
    assert.equal(isVisible(visibilityOf(user('bob', ['reviewers'])), owner), true);
    assert.equal(isVisible(visibilityOf(user('bob', ['ops'])), owner), false);
    assert.equal(isVisible(visibilityOf(user('root', [], true)), owner), true);
    assert.equal(isVisible(visibilityOf(user('bob', ['reviewers'])), null), false, 'an unowned session is only for those who see all');
    assert.equal(isVisible(visibilityOf({ kind: 'shared_token' }), owner), true);
  });
});
