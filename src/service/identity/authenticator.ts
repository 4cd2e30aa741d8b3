// Who is asking: the one seam every request passes before any route runs. Two implementations:
// the single shared bearer token (here), and per-user tokens from an OIDC issuer
// (oidcAuthenticator.ts). Routes receive the principal it returns and scope the store by it.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthMetadata } from '../../core/authMetadata';
import type * as http from 'node:http';
import type { Principal } from './sessionOwner';

export type { Principal } from './sessionOwner';

export class AuthenticationError extends Error {
  constructor(
    message: string,
    /** A machine-readable why, sent as `error.reason` (`token_expired`: the client asks for a new one). */
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** The bearer token of a request, or an AuthenticationError saying how to send one. */
export function bearerToken(req: http.IncomingMessage): string {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!match) throw new AuthenticationError('missing bearer token: send Authorization: Bearer <token>');
  return match[1] as string;
}

export interface RequestAuthenticator {
  /** Resolves with the principal, or throws AuthenticationError (answered 401 with its message). */
  authenticate(req: http.IncomingMessage): Promise<Principal>;
  /** What the extension needs to sign a person in, published without a token; absent: no sign-in here. */
  signInMetadata?(): AuthMetadata | null;
}

/** The single shared token (or none, for --insecure-no-auth on loopback). */
export class SharedTokenAuthenticator implements RequestAuthenticator {
  private readonly tokenDigest: Buffer | null;

  constructor(token: string | null) {
    this.tokenDigest = token === null ? null : digest(token);
  }

  async authenticate(req: http.IncomingMessage): Promise<Principal> {
    if (this.tokenDigest === null) return { kind: 'anonymous' };
    // Hashing first gives equal lengths, so timingSafeEqual cannot leak the token's length.
    if (!timingSafeEqual(digest(bearerToken(req)), this.tokenDigest)) throw new AuthenticationError('the bearer token was refused');
    return { kind: 'shared_token' };
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
