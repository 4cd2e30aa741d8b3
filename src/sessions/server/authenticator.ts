// Who is asking: the one seam every request passes before any route runs. Today the only
// authenticator is the single shared bearer token; per-user tokens (an OIDC issuer's, verified
// against its keys) plug in here as another implementation, and routes receive what it returns.
import { createHash, timingSafeEqual } from 'node:crypto';
import type * as http from 'node:http';

/** Whoever a request was authenticated as. */
export type Principal = { kind: 'shared_token' } | { kind: 'anonymous' };

export class AuthenticationError extends Error {}

export interface RequestAuthenticator {
  /** Resolves with the principal, or throws AuthenticationError (answered 401 with its message). */
  authenticate(req: http.IncomingMessage): Promise<Principal>;
}

/** The single shared token (or none, for --insecure-no-auth on loopback). */
export class SharedTokenAuthenticator implements RequestAuthenticator {
  private readonly tokenDigest: Buffer | null;

  constructor(token: string | null) {
    this.tokenDigest = token === null ? null : digest(token);
  }

  async authenticate(req: http.IncomingMessage): Promise<Principal> {
    if (this.tokenDigest === null) return { kind: 'anonymous' };
    const header = req.headers.authorization ?? '';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!match) throw new AuthenticationError('missing bearer token: send Authorization: Bearer <token>');
    // Hashing first gives equal lengths, so timingSafeEqual cannot leak the token's length.
    if (!timingSafeEqual(digest(match[1] as string), this.tokenDigest)) throw new AuthenticationError('the bearer token was refused');
    return { kind: 'shared_token' };
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
