// The egress allow-list on its own: what an entry means, and which resolved addresses a name may
// not lead to. The proxy that applies it is attacked with real processes in sandboxAttacks.test.ts.
import { strict as assert } from 'node:assert';
import { networkInterfaces } from 'node:os';
import { addressDenial, decideTarget, egressPolicy, parseHostRule } from '../../../src/agents/sandbox/hostPolicy';

describe('agent sandbox: egress host policy', () => {
  it('reads host, host:port, wildcard, IPv4 and bracketed IPv6 entries', () => {
    assert.deepEqual(parseHostRule('API.Anthropic.com'), { host: 'api.anthropic.com', wildcard: false, port: undefined, ipVersion: 0 });
    assert.deepEqual(parseHostRule('*.googleapis.com:443'), { host: 'googleapis.com', wildcard: true, port: 443, ipVersion: 0 });
    assert.deepEqual(parseHostRule('127.0.0.1:8080'), { host: '127.0.0.1', wildcard: false, port: 8080, ipVersion: 4 });
    assert.deepEqual(parseHostRule('[::1]:8080'), { host: '::1', wildcard: false, port: 8080, ipVersion: 6 });
    assert.deepEqual(parseHostRule('1.1.1.1'), { host: '1.1.1.1', wildcard: false, port: undefined, ipVersion: 4 });
  });

  it('refuses entries that would open too much or are not hosts', () => {
    assert.throws(() => parseHostRule('127.0.0.1'), /must name its port/);
    assert.throws(() => parseHostRule('10.1.2.3'), /must name its port/);
    assert.throws(() => parseHostRule('169.254.169.254'), /must name its port/);
    assert.throws(() => parseHostRule('*.127.0.0.1'), /host name|wildcard/);
    assert.throws(() => parseHostRule('http://example.com'), /not a number|not a host name/);
    assert.throws(() => parseHostRule('example.com:99999'), /out of range/);
    assert.throws(() => parseHostRule('exa mple.com'), /not a host name/);
  });

  it('allows only what the list names: host, port, and subdomains for a wildcard (not its apex)', () => {
    const policy = egressPolicy(['api.anthropic.com:443', '*.googleapis.com', '127.0.0.1:4000']);
    assert.deepEqual(decideTarget(policy, 'api.anthropic.com', 443), { allowed: true, literal: false });
    assert.deepEqual(decideTarget(policy, 'API.ANTHROPIC.COM.', 443), { allowed: true, literal: false });
    assert.equal(decideTarget(policy, 'api.anthropic.com', 80).allowed, false);
    assert.equal(decideTarget(policy, 'evil-anthropic.com', 443).allowed, false);
    assert.equal(decideTarget(policy, 'generativelanguage.googleapis.com', 443).allowed, true);
    assert.equal(decideTarget(policy, 'googleapis.com', 443).allowed, false);
    assert.equal(decideTarget(policy, 'googleapis.com.evil.net', 443).allowed, false);
    assert.deepEqual(decideTarget(policy, '127.0.0.1', 4000), { allowed: true, literal: true });
    assert.deepEqual(decideTarget(policy, '::ffff:127.0.0.1', 4000), { allowed: true, literal: true });
    assert.equal(decideTarget(policy, '127.0.0.1', 5432).allowed, false);
    assert.equal(decideTarget(policy, '127.0.0.2', 4000).allowed, false);
    assert.equal(decideTarget(policy, 'api.anthropic.com', 0).allowed, false);
  });

  it('the metadata address stays out even when listed, unless the session allows private networks', () => {
    assert.equal(decideTarget(egressPolicy(['169.254.169.254:80']), '169.254.169.254', 80).allowed, false);
    assert.equal(decideTarget(egressPolicy(['169.254.169.254:80'], true), '169.254.169.254', 80).allowed, true);
  });

  it('a name may not resolve to loopback, link-local, metadata, multicast or this host; private ranges only when allowed', () => {
    for (const address of [
      '127.0.0.1',
      '127.9.9.9',
      '::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
      '169.254.169.254',
      'fe80::1',
      '100.100.100.200',
      'fd00:ec2::254',
      '224.0.0.1',
    ]) {
      assert.ok(addressDenial(address, false), `${address} refused`);
      assert.ok(addressDenial(address, true), `${address} refused even with private networks allowed`);
    }
    for (const address of ['10.0.0.5', '172.20.1.1', '192.168.1.10', '100.64.0.1', 'fd12::1', '::ffff:10.0.0.5']) {
      assert.match(addressDenial(address, false) ?? '', /private/, address);
      assert.equal(addressDenial(address, true), undefined, address);
    }
    for (const address of ['1.1.1.1', '2606:4700::1111', '172.32.0.1']) assert.equal(addressDenial(address, false), undefined, address);
    const own = Object.values(networkInterfaces())
      .flat()
      .map((info) => info?.address)
      .filter((address): address is string => typeof address === 'string' && !address.startsWith('127.') && address !== '::1');
    for (const address of own) assert.ok(addressDenial(address, true), `this host's ${address} refused`);
  });
});
