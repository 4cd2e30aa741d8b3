// The extension reads a JWT's expiry (without verifying: the server does) to say "expired, run
// Set Server Token…" instead of sending a token only to have it refused.
import { strict as assert } from 'node:assert';
import { expiredTokenProblem, tokenExpiresAt } from '../../src/core/serverToken';

const jwt = (payload: unknown, header: unknown = { alg: 'RS256', typ: 'JWT' }) =>
  `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;

describe('server tokens in the extension', () => {
  it('reads a JWT’s exp, and nothing from a token that is no JWT', () => {
    assert.deepEqual(tokenExpiresAt(jwt({ sub: 'u', exp: 1_800_000_000 })), new Date(1_800_000_000_000));
    assert.equal(tokenExpiresAt(jwt({ sub: 'u' })), null, 'no exp');
    assert.equal(tokenExpiresAt(jwt({ exp: '1800000000' })), null, 'exp must be a number');
    assert.equal(tokenExpiresAt('3f9a1c0d8e7b6a5f4e3d2c1b0a9f8e7d'), null, 'a shared secret');
    assert.equal(tokenExpiresAt('a.b+c.d'), null, 'not base64url');
    assert.equal(tokenExpiresAt(`x.${Buffer.from('not json').toString('base64url')}.y`), null);
    // A payload in UTF-8 (a name with accents) still reads.
    assert.deepEqual(tokenExpiresAt(jwt({ name: 'Zoë Ångström', exp: 1 })), new Date(1000));
  });

  it('names the origin, the time and the command once the token has expired, and nothing before', () => {
    const now = new Date('2026-12-01T12:00:00Z');
    const token = jwt({ exp: now.getTime() / 1000 - 5 });
    assert.equal(
      expiredTokenProblem(token, 'https://plans.example.com', now),
      'Your token for https://plans.example.com expired at 2026-12-01T11:59:55.000Z. Run "Ultraplan: Set Server Token…" to paste a new one.',
    );
    assert.equal(expiredTokenProblem(jwt({ exp: now.getTime() / 1000 + 60 }), 'https://plans.example.com', now), null);
    assert.equal(expiredTokenProblem('shared-secret', 'https://plans.example.com', now), null);
  });
});
