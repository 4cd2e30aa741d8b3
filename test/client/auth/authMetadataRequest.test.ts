// The extension's first step of a sign-in: reading the server's auth metadata over real HTTP.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchAuthMetadata } from '../../../src/client/auth/authMetadataRequest';
import { AUTH_METADATA_PATH } from '../../../src/core/authMetadata';

describe('reading a server’s auth metadata', () => {
  let server: http.Server;
  let base = '';
  let answer: { status: number; body: string } = { status: 200, body: '{}' };
  const paths: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      paths.push(`${req.method} ${req.url} ${req.headers.authorization ?? 'no authorization'}`);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads it from the unauthenticated route, under a server URL with or without a trailing slash', async () => {
    const metadata = { issuer: 'https://login.example.com', client_id: 'ultraplan-vscode', scopes: ['openid', 'offline_access'] };
    answer = { status: 200, body: JSON.stringify(metadata) };
    assert.deepEqual(await fetchAuthMetadata(base), metadata);
    assert.deepEqual(await fetchAuthMetadata(`${base}/`), metadata);
    assert.deepEqual(paths.slice(-2), [`GET ${AUTH_METADATA_PATH} no authorization`, `GET ${AUTH_METADATA_PATH} no authorization`]);
  });

  it('says what is wrong: no sign-in offered, an error, metadata that cannot be used', async () => {
    answer = { status: 404, body: '{}' };
    await assert.rejects(fetchAuthMetadata(base), /offers no sign-in .*paste a token instead/);
    answer = { status: 503, body: '{}' };
    await assert.rejects(fetchAuthMetadata(base), /answered HTTP 503/);
    answer = { status: 200, body: JSON.stringify({ issuer: 'http://login.example.com', client_id: 'x', scopes: ['openid'] }) };
    await assert.rejects(fetchAuthMetadata(base), /cannot be used: .*https/);
    answer = { status: 200, body: 'not json' };
    await assert.rejects(fetchAuthMetadata(base), /did not answer JSON/);
  });
});
