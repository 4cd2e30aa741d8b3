// The metadata a team server publishes for sign-in: what the extension accepts, and what it
// refuses before talking to any issuer.
import assert from 'node:assert/strict';
import { AUTH_METADATA_PATH, isLoopbackHost, parseAuthMetadata } from '../../src/core/authMetadata';

const good = {
  issuer: 'https://login.example.com/realms/eng',
  client_id: 'ultraplan-vscode',
  scopes: ['openid', 'offline_access', 'email', 'groups'],
  resource: 'https://ultraplan.example.com/api',
  device_authorization: true,
};

describe('auth metadata (what a server publishes for sign-in)', () => {
  it('is served at a fixed unauthenticated route', () => {
    assert.equal(AUTH_METADATA_PATH, '/v1/ultraplan/auth-metadata');
  });

  it('accepts an https issuer, and http only on a loopback address', () => {
    assert.deepEqual(parseAuthMetadata(good), { ok: true, metadata: good });
    assert.equal(parseAuthMetadata({ ...good, issuer: 'http://127.0.0.1:8080' }).ok, true);
    assert.equal(parseAuthMetadata({ ...good, issuer: 'http://localhost:8080/realms/x' }).ok, true);
    const plain = parseAuthMetadata({ ...good, issuer: 'http://login.example.com' });
    assert.equal(plain.ok, false);
    assert.match(plain.ok ? '' : plain.problem, /https/);
  });

  it('refuses credentials in the issuer, a scope with spaces or quotes, unknown fields and a missing client id', () => {
    assert.equal(parseAuthMetadata({ ...good, issuer: 'https://user:pw@login.example.com' }).ok, false);
    assert.equal(parseAuthMetadata({ ...good, scopes: ['openid email'] }).ok, false);
    assert.equal(parseAuthMetadata({ ...good, scopes: ['a"b'] }).ok, false);
    assert.equal(parseAuthMetadata({ ...good, scopes: [] }).ok, false);
    assert.equal(parseAuthMetadata({ ...good, client_secret: 'x' }).ok, false);
    const { client_id: _, ...noClient } = good;
    assert.equal(parseAuthMetadata(noClient).ok, false);
    assert.equal(parseAuthMetadata({ ...good, resource: 'urn:x' }).ok, false);
  });

  it('knows loopback hosts', () => {
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['127.0.0.1.example.com', 'example.com', '10.0.0.1']) assert.ok(!isLoopbackHost(host), host);
  });
});
