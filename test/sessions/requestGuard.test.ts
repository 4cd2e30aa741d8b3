import { strict as assert } from 'node:assert';
import { allowedHostNames, hostHeaderName, refuseRequest } from '../../src/sessions/requestGuard';

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
});
