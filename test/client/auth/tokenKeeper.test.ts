// TokenKeeper's own rules, beside the real-provider tests in oauthClient.test.ts: a renewal that
// fails on the way (a real refused connection) keeps the sign-in and tries again; renewals
// asked for together are one; a sign-in without a refresh token ends when its token expires; a
// pair another window renewed is taken, not renewed again; a refusal ends the sign-in once.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { SignInEndedError, TokenKeeper, type TokenStore } from '../../../src/client/auth/tokenKeeper';
import type { StoredTokens } from '../../../src/client/auth/tokens';
import { waitFor } from '../../support/wait';

function tokens(now: number, lifetimeMs: number, overrides: Partial<StoredTokens> = {}): StoredTokens {
  return {
    issuer: 'https://issuer.test',
    client_id: 'ultraplan-vscode',
    access_token: `access-${now}`,
    refresh_token: 'refresh-1',
    obtained_at: now,
    expires_at: now + lifetimeMs,
    account: { id: 'alice', label: 'alice@example.com' },
    ...overrides,
  };
}

function memoryStore(initial?: StoredTokens): TokenStore & { value: StoredTokens | undefined } {
  const store = {
    value: initial,
    load: () => Promise.resolve(store.value),
    save: (t: StoredTokens) => {
      store.value = t;
      return Promise.resolve();
    },
    clear: () => {
      store.value = undefined;
      return Promise.resolve();
    },
  };
  return store;
}

/** A port nothing listens on: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('TokenKeeper', () => {
  it('keeps the sign-in through a renewal that fails on the network, and renews on the retry', async () => {
    const port = await closedPort();
    const lines: string[] = [];
    let calls = 0;
    const first = tokens(Date.now(), 60_000);
    const keeper = new TokenKeeper({
      store: memoryStore(first),
      retryBaseMs: 50,
      log: (line) => lines.push(line),
      renew: async (t) => {
        calls += 1;
        if (calls === 1) await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST' });
        return { ...t, access_token: 'renewed', obtained_at: Date.now(), expires_at: Date.now() + 60_000 };
      },
    });
    try {
      await keeper.start();
      assert.equal(await keeper.renewNow(), first, 'the still-valid token is kept after a failed renewal');
      assert.match(lines[0] ?? '', /renewing the access token failed \(fetch failed\); trying again in 50 ms/);
      await waitFor(() => keeper.current?.access_token, {
        until: (token) => token === 'renewed',
        message: 'the renewed token',
        timeoutMs: 10_000,
      });
      assert.equal(keeper.current?.access_token, 'renewed');
      assert.equal(calls, 2);
    } finally {
      keeper.dispose();
    }
  });

  it('makes one renewal of renewals asked for together, and answers a fresh token without renewing', async () => {
    let calls = 0;
    const now = Date.now();
    const keeper = new TokenKeeper({
      store: memoryStore(tokens(now, 60_000)),
      renew: async (t) => {
        calls += 1;
        await new Promise((r) => setTimeout(r, 20));
        return { ...t, access_token: `renewed-${calls}` };
      },
    });
    try {
      await keeper.start();
      assert.equal(await keeper.accessToken(), `access-${now}`);
      assert.equal(calls, 0);
      const results = await Promise.all([keeper.renewNow(), keeper.renewNow(), keeper.renewNow()]);
      assert.equal(calls, 1);
      assert.deepEqual(
        results.map((r) => r?.access_token),
        ['renewed-1', 'renewed-1', 'renewed-1'],
      );
    } finally {
      keeper.dispose();
    }
  });

  it('ends a sign-in without a refresh token once its access token expires', async () => {
    const store = memoryStore(tokens(Date.now() - 10_000, 5_000, { refresh_token: undefined }));
    const changes: (StoredTokens | undefined)[] = [];
    const keeper = new TokenKeeper({ store, renew: () => Promise.reject(new Error('not called')), onChange: (t) => changes.push(t) });
    await keeper.start();
    assert.equal(await keeper.accessToken(), undefined);
    assert.equal(store.value, undefined);
    assert.deepEqual(changes, [undefined]);
  });

  it('takes the pair another window renewed and stored instead of sending the rotated-out refresh token again', async () => {
    const store = memoryStore(tokens(Date.now() - 50_000, 60_000));
    const sent: string[] = [];
    const rotating = (t: StoredTokens): Promise<StoredTokens> => {
      sent.push(t.refresh_token ?? '');
      const now = Date.now();
      return Promise.resolve({
        ...t,
        access_token: `access-${now}`,
        refresh_token: `refresh-${sent.length + 1}`,
        obtained_at: now,
        expires_at: now + 60_000,
      });
    };
    const first = new TokenKeeper({ store, renew: rotating });
    const second = new TokenKeeper({ store, renew: rotating });
    try {
      await Promise.all([first.start(), second.start()]);
      const renewed = await first.accessToken();
      assert.deepEqual(sent, ['refresh-1'], 'the due token renewed once');
      assert.equal(store.value?.refresh_token, 'refresh-2');
      assert.equal(await second.accessToken(), renewed, "the other window's renewal taken");
      assert.deepEqual(sent, ['refresh-1'], 'refresh-1 never sent twice');
      assert.equal(second.current?.refresh_token, 'refresh-2');
    } finally {
      first.dispose();
      second.dispose();
    }
  });

  it('ends the sign-in once when the issuer refuses the renewal, and tells why', async () => {
    const store = memoryStore(tokens(Date.now() - 50_000, 60_000));
    const ended: string[] = [];
    const changes: (StoredTokens | undefined)[] = [];
    let calls = 0;
    const keeper = new TokenKeeper({
      store,
      renew: () => {
        calls += 1;
        return Promise.reject(new SignInEndedError('grant request is invalid'));
      },
      onChange: (t) => changes.push(t),
      onEnded: (reason) => ended.push(reason),
    });
    try {
      await keeper.start();
      assert.deepEqual(await Promise.all([keeper.accessToken(), keeper.accessToken()]), [undefined, undefined]);
      assert.equal(await keeper.accessToken(), undefined, 'asked again after the end: nothing sent');
      assert.equal(calls, 1);
      assert.deepEqual(ended, ['grant request is invalid']);
      assert.deepEqual(changes, [undefined]);
      assert.equal(store.value, undefined);
    } finally {
      keeper.dispose();
    }
  });
});
