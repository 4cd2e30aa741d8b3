import { strict as assert } from 'node:assert';
import { allowedHostNames, guardRequest, hostHeaderName, refuseRequest } from '../../src/service/http/requestGuard';

describe('request guard (pure)', () => {
  it('reads the host name of a Host header, refusing what is not a bare host[:port]', () => {
    assert.equal(hostHeaderName('127.0.0.1:8787'), '127.0.0.1');
    assert.equal(hostHeaderName('[::1]:8787'), '::1');
    assert.equal(hostHeaderName('LocalHost.'), 'localhost');
    assert.equal(hostHeaderName('user@127.0.0.1'), null);
    assert.equal(hostHeaderName('127.0.0.1/evil'), null);
    assert.equal(hostHeaderName('exa mple'), null);
  });

  it('allows the bound address and localhost; localhost binds allow the loopback addresses; names can be added', () => {
    assert.deepEqual([...allowedHostNames('127.0.0.1')].sort(), ['127.0.0.1', 'localhost']);
    assert.deepEqual([...allowedHostNames('[::1]')].sort(), ['::1', 'localhost']);
    assert.deepEqual([...allowedHostNames('localhost')].sort(), ['127.0.0.1', '::1', 'localhost']);
    assert.ok(allowedHostNames('127.0.0.1', ['Plans.Internal.']).has('plans.internal'));
    // A wildcard bind answers on every interface: loopback among them, never any name at all.
    const wildcard = allowedHostNames('0.0.0.0');
    assert.ok(wildcard.has('127.0.0.1'));
    assert.ok(!wildcard.has('evil.example') && !wildcard.has('0.0.0.0'));
  });

  it('lets through what a program sends and refuses what a browser adds', () => {
    const allowed = allowedHostNames('127.0.0.1');
    const program = { method: 'POST', headers: { host: '127.0.0.1:1', 'content-type': 'application/json', 'sec-fetch-mode': 'cors' } };
    assert.equal(refuseRequest(program, allowed), null, "Node's fetch adds sec-fetch-mode, which says nothing about a page");
    assert.equal(refuseRequest({ method: 'GET', headers: { host: 'localhost:1', 'sec-fetch-site': 'none' } }, allowed), null);
    assert.equal(
      refuseRequest({ ...program, headers: { ...program.headers, origin: 'http://127.0.0.1:1' } }, allowed)?.status,
      403,
      'even a same-origin page',
    );
    assert.equal(refuseRequest({ ...program, headers: { ...program.headers, 'sec-fetch-site': 'same-origin' } }, allowed)?.status, 403);
    assert.equal(refuseRequest({ ...program, headers: { ...program.headers, host: 'rebind.example:1' } }, allowed)?.status, 403);
    assert.equal(
      refuseRequest({ ...program, headers: { ...program.headers, 'content-type': 'text/plain;charset=UTF-8' } }, allowed)?.status,
      415,
    );
    assert.equal(refuseRequest({ method: 'GET', headers: {} }, allowed)?.status, 400);
    assert.equal(refuseRequest({ method: 'GET', headers: { host: ['127.0.0.1', 'evil'] } }, allowed)?.status, 403);
  });

  it('lets in the review page on its own origin, to its routes only, and a link followed from anywhere to the page alone', () => {
    const allowed = allowedHostNames('127.0.0.1');
    const host = '127.0.0.1:1';
    const kind = (method: string, pathname: string, headers: Record<string, string>) => {
      const verdict = guardRequest({ method, headers: { host, ...headers } }, allowed, pathname);
      return verdict.kind === 'refused' ? verdict.refusal.status : verdict.kind;
    };
    const page = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' };
    const json = { 'content-type': 'application/json' };
    assert.equal(kind('GET', '/v1/sessions/session_a', {}), 'program');
    assert.equal(kind('GET', '/v1/sessions/session_a/events', page), 'page');
    assert.equal(kind('POST', '/v1/sessions/session_a/events', { ...page, origin: `http://${host}`, ...json }), 'page');
    assert.equal(kind('POST', '/v1/sessions/session_a/events', { ...page, ...json, 'content-type': 'text/plain' }), 415);
    // A browser without fetch metadata: its Origin alone, and it must be this server.
    assert.equal(kind('POST', '/v1/sessions/session_a/events', { origin: `http://${host}`, ...json }), 'page');
    assert.equal(kind('POST', '/v1/sessions/session_a/events', { origin: 'http://127.0.0.1:2', ...json }), 403);
    assert.equal(kind('POST', '/v1/sessions/session_a/events', { ...page, origin: 'http://attacker.test', ...json }), 403);
    // Not the page's routes, same origin or not.
    for (const path of ['/v1/sessions', '/v1/code/sessions', '/v1/sessions/session_a/archive', '/v1/ultraplan/review-links']) {
      assert.equal(kind('GET', path, page), 403, path);
    }
    // A link from a chat or a mail: a GET navigation to the page, and nothing else.
    const link = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' };
    assert.equal(kind('GET', '/review/session_a', link), 'navigation');
    assert.equal(kind('GET', '/v1/sessions/session_a', link), 403);
    assert.equal(kind('POST', '/review/session_a/open', { ...link, 'content-type': 'application/x-www-form-urlencoded' }), 403);
    assert.equal(kind('GET', '/review/session_a', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }), 403);
    // The link page's form: a form post from the page, not JSON.
    const form = { ...page, 'sec-fetch-mode': 'navigate', origin: `http://${host}`, 'content-type': 'application/x-www-form-urlencoded' };
    assert.equal(kind('POST', '/review/session_a/open', form), 'page');
    // A DNS-rebinding page is same-origin with itself: its Host is still refused first.
    assert.equal(
      guardRequest({ method: 'GET', headers: { host: 'rebind.test:1', ...page } }, allowed, '/v1/sessions/session_a').kind,
      'refused',
    );
  });

  it('with --public-url, lets the page in from exactly that origin (behind a proxy whose Host is the upstream name)', () => {
    const publicOrigin = 'https://plans.example.com';
    const allowed = allowedHostNames('127.0.0.1', ['plans.example.com']);
    const kind = (host: string, headers: Record<string, string>) => {
      const verdict = guardRequest(
        { method: 'POST', headers: { host, 'content-type': 'application/json', ...headers } },
        allowed,
        '/v1/sessions/session_a/events',
        publicOrigin,
      );
      return verdict.kind === 'refused' ? verdict.refusal.status : verdict.kind;
    };
    const page = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' };
    assert.equal(kind('plans.example.com', { ...page, origin: publicOrigin }), 'page');
    // The proxy passes its upstream address as Host: the page's origin is still the public one.
    assert.equal(kind('127.0.0.1:8787', { ...page, origin: publicOrigin }), 'page');
    assert.equal(kind('127.0.0.1:8787', { origin: publicOrigin }), 'page');
    // The listening address as an origin is not the page's once a public origin is set, nor another scheme or port.
    assert.equal(kind('127.0.0.1:8787', { ...page, origin: 'http://127.0.0.1:8787' }), 403);
    assert.equal(kind('plans.example.com', { ...page, origin: 'http://plans.example.com' }), 403);
    assert.equal(kind('plans.example.com', { ...page, origin: 'https://plans.example.com:8443' }), 403);
    assert.equal(kind('plans.example.com', { origin: 'https://evil.example.com' }), 403);
    assert.equal(kind('plans.example.com', { ...page, origin: 'null' }), 403);
  });
});
