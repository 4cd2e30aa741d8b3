// Browser sessions and one-time links on a clock the test moves: a link expires, works once and
// only for its session; a session ends after its idle time and after its absolute lifetime; the
// store holds digests only, and the CSRF token is bound to the cookie.
import { strict as assert } from 'node:assert';
import { BrowserSessions, digest } from '../../../../src/service/http/reviewPage/browserSessions';
import { MemoryBrowserState } from '../../../../src/service/identity/browserState';
import type { UserPrincipal } from '../../../../src/service/identity/sessionOwner';

describe('browser sessions and one-time links', () => {
  let now = 1_000_000;
  let store: MemoryBrowserState;
  const sessions = () => {
    store = new MemoryBrowserState(() => now);
    return new BrowserSessions({ linkTtlMs: 1000, idleMs: 5000, maxMs: 20_000, store });
  };
  const principal = { kind: 'shared_token' } as const;

  it('a link works once, for its session, before it expires', async () => {
    const s = sessions();
    const { token } = await s.mintLink('session_a', principal);
    const started = await s.redeemLink(token, 'session_a');
    assert.ok('id' in started);
    assert.deepEqual(await s.redeemLink(token, 'session_a'), {
      refused: 'this review link was already used or is not one this server gave; ask for a new link',
    });
    const other = await s.mintLink('session_a', principal);
    assert.deepEqual(await s.redeemLink(other.token, 'session_b'), { refused: 'this review link is for another session' });
    // Tried for the wrong session, it is spent all the same (a guess costs the link).
    assert.ok('refused' in (await s.redeemLink(other.token, 'session_a')));
    const late = await s.mintLink('session_a', principal);
    now += 1000;
    assert.deepEqual(await s.redeemLink(late.token, 'session_a'), { refused: 'this review link has expired; ask for a new link' });
  });

  it('a session ends after its idle time, each request restarting it, and after its lifetime in any case', async () => {
    const s = sessions();
    const { id, session } = await s.start(principal, 'session_a');
    assert.equal(session.csrfToken.length, 43);
    for (let i = 0; i < 3; i++) {
      now += 4999;
      assert.ok(!('expired' in (await s.find(id))), `request ${i} within the idle time`);
    }
    now += 4999; // 19,996 ms old: within its lifetime
    assert.ok(!('expired' in (await s.find(id))));
    now += 10;
    assert.match(((await s.find(id)) as { expired: string }).expired, /expired/);
    const idle = await s.start(principal, null);
    now += 5000;
    assert.match(((await s.find(idle.id)) as { expired: string }).expired, /expired/);
    assert.equal(store.size.sessions, 0, 'an ended session is forgotten');
  });

  it('keeps digests, not secrets; the CSRF token is the same on every request of one cookie and differs between cookies', async () => {
    const s = sessions();
    const a = await s.start(principal, null);
    const b = await s.start(principal, null);
    const { token } = await s.mintLink('session_a', principal);
    const found = await s.find(a.id);
    assert.ok('csrfToken' in found);
    assert.equal(found.csrfToken, a.session.csrfToken);
    assert.notEqual(a.session.csrfToken, b.session.csrfToken);
    assert.notEqual(a.session.csrfToken, a.id);
    assert.equal(await store.touchSession(a.id, 5000), null, 'the raw cookie is no key');
    assert.ok(await store.touchSession(digest(a.id), 5000), 'its digest is');
    assert.equal(await store.takeLink(token), null, 'the raw link token is no key');
    await s.end(a.id);
    assert.match(((await s.find(a.id)) as { expired: string }).expired, /signed out/);
    assert.ok(!('expired' in (await s.find(b.id))), 'ending one session leaves the others');
  });

  it('a signed-in principal holds for its token’s lifetime, then is renewed once; a refusal or no refresh token ends the session', async () => {
    const { PrincipalRenewalRefused } = await import('../../../../src/service/identity/browserSignIn');
    const bob: UserPrincipal = { kind: 'user', sub: 'bob', name: 'bob', groups: ['reviewers'], reviewGroups: ['reviewers'], admin: false };
    const sent: string[] = [];
    let answer: 'renew' | 'refuse' | 'fail' = 'renew';
    store = new MemoryBrowserState(() => now);
    const s = new BrowserSessions({
      idleMs: 60_000,
      maxMs: 600_000,
      store,
      renewalLeaseMs: 2000,
      renew: async (refreshToken) => {
        sent.push(refreshToken);
        if (answer === 'refuse') throw new PrincipalRenewalRefused('grant request is invalid');
        if (answer === 'fail') throw new Error('the issuer is down');
        return { principal: { ...bob, groups: [], reviewGroups: [] }, renewal: { refreshToken: `${refreshToken}+`, ttlMs: 1000 } };
      },
    });
    const groups = async (id: string) => {
      const found = await s.find(id);
      return 'expired' in found ? found.expired : (found.principal as UserPrincipal).groups;
    };
    const { id } = await s.start(bob, null, { refreshToken: 'rt', ttlMs: 1000 });
    now += 999;
    assert.deepEqual(await groups(id), ['reviewers']);
    assert.deepEqual(sent, []);
    now += 1;
    assert.deepEqual(await groups(id), [], 'renewed: the groups the issuer gives now');
    assert.deepEqual(await groups(id), []);
    assert.deepEqual(sent, ['rt']);
    // A renewal that fails on the way keeps the session; the next one after the lease tries again.
    answer = 'fail';
    now += 1000;
    assert.deepEqual(await groups(id), []);
    assert.deepEqual(await groups(id), [], 'within the lease: not tried again');
    assert.deepEqual(sent, ['rt', 'rt+']);
    answer = 'refuse';
    now += 2000;
    assert.match(String(await groups(id)), /your sign-in ended at the issuer \(grant request is invalid\)/);
    assert.match(String(await groups(id)), /no browser session/, 'ended for good');
    assert.deepEqual(sent, ['rt', 'rt+', 'rt+']);
    // Without a refresh token, the principal's lifetime is the session's.
    const once = await s.start(bob, null, { refreshToken: undefined, ttlMs: 1000 });
    now += 1000;
    assert.match(String(await groups(once.id)), /your sign-in has expired/);
    // A one-time link's session has no issuer to ask: its principal stands for the session's life.
    const link = await s.start(principal, 'session_a');
    now += 50_000;
    assert.ok(!('expired' in (await s.find(link.id))));
    assert.equal(sent.length, 3);
  });
});
