// Per-user bearer tokens from the team's OIDC issuer: a JWT verified with `jose` against the
// issuer's published keys (JWKS), its issuer, audience and expiry checked with a bounded clock
// skew, and only asymmetric algorithms taken. A token signed with `none` or an HMAC algorithm
// (for which an attacker would only need the issuer's public key as the "secret") is refused
// before any key is looked at. The claims are parsed once, here, into a Principal.
import type * as http from 'node:http';
import type { AuthMetadata } from '../../core/authMetadata';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import * as z from 'zod';
import { SessionsError, errorMessage } from '../../core/errors';
import { TOKEN_EXPIRED_REASON } from '../../core/serverToken';
import type { UserPrincipal } from './sessionOwner';
import { AuthenticationError, bearerToken, type RequestAuthenticator } from './authenticator';

/** Signature algorithms that need the issuer's private key. Everything else is refused. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export interface OidcSettings {
  /** The issuer URL, exactly as tokens carry it in `iss`. */
  issuer: string;
  /** What tokens for this server carry in `aud`. */
  audience: string;
  /** The JWKS URL; else read from the issuer's discovery document (`jwks_uri`). */
  jwksUrl: string | null;
  /** The claim holding the user's groups (a top-level name, or a dotted path). */
  groupsClaim: string;
  /** Groups whose members see and decide the sessions of other members of that group. */
  reviewGroups: string[];
  /** Members see and decide every session. */
  adminGroup: string | null;
  clockSkewSeconds: number;
  /** What the extension needs to sign people in (published at AUTH_METADATA_PATH); null when it is not offered. */
  signIn?: { clientId: string; scopes: string[]; resource: string | null; deviceAuthorization: boolean } | null;
}

export const DEFAULT_GROUPS_CLAIM = 'groups';
export const DEFAULT_CLOCK_SKEW_SECONDS = 60;
const DISCOVERY_TIMEOUT_MS = 10_000;

const DiscoverySchema = z.looseObject({ issuer: z.string(), jwks_uri: z.url({ protocol: /^https?$/ }) });

/** The claims we read; anything else in the token is ignored. */
const ClaimsSchema = z.looseObject({
  sub: z.string().min(1).max(255),
  email: z.string().max(320).optional(),
  name: z.string().max(256).optional(),
  preferred_username: z.string().max(256).optional(),
});
const GroupsSchema = z.union([z.array(z.string().max(256)).max(1000), z.string().max(256)]).optional();

export class OidcAuthenticator implements RequestAuthenticator {
  private jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | null = null;

  constructor(
    readonly settings: OidcSettings,
    private readonly log: (line: string) => void = () => {},
  ) {}

  async authenticate(req: http.IncomingMessage): Promise<UserPrincipal> {
    return this.verify(bearerToken(req));
  }

  /** How the extension signs people in to this server, when --oidc-client-id says. */
  signInMetadata(): AuthMetadata | null {
    const signIn = this.settings.signIn;
    if (!signIn) return null;
    return {
      issuer: this.settings.issuer,
      client_id: signIn.clientId,
      scopes: signIn.scopes,
      ...(signIn.resource ? { resource: signIn.resource } : {}),
      device_authorization: signIn.deviceAuthorization,
    };
  }

  /** The principal a token stands for, or AuthenticationError (401) saying why it is refused. */
  async verify(token: string): Promise<UserPrincipal> {
    const keys = await this.keys();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: this.settings.clockSkewSeconds,
        algorithms: ASYMMETRIC_ALGORITHMS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      throw refusal(err);
    }
    return this.principal(payload);
  }

  /** Finds the keys once (discovery when no JWKS URL is configured); a failure is retried by the next request. */
  keys(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.jwks === null) {
      this.jwks = this.jwksUrl().then((url) => createRemoteJWKSet(new URL(url), { timeoutDuration: DISCOVERY_TIMEOUT_MS }));
      this.jwks.catch(() => {
        this.jwks = null;
      });
    }
    return this.jwks;
  }

  private async jwksUrl(): Promise<string> {
    if (this.settings.jwksUrl !== null) return this.settings.jwksUrl;
    const where = discoveryUrl(this.settings.issuer);
    let body: unknown;
    try {
      const response = await fetch(where, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS), redirect: 'error' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      body = await response.json();
    } catch (err) {
      throw unavailable(`could not read the OIDC discovery document at ${where} (${errorMessage(err)})`);
    }
    const parsed = DiscoverySchema.safeParse(body);
    if (!parsed.success) throw unavailable(`the OIDC discovery document at ${where} has no usable jwks_uri`);
    // OpenID Connect Discovery 1.0 section 4.3: the document must name the issuer it was asked for.
    if (parsed.data.issuer !== this.settings.issuer) {
      throw unavailable(`the OIDC discovery document at ${where} names issuer ${parsed.data.issuer}, not ${this.settings.issuer}`);
    }
    this.log(`oidc: keys of ${this.settings.issuer} from ${parsed.data.jwks_uri}`);
    return parsed.data.jwks_uri;
  }

  private principal(payload: JWTPayload): UserPrincipal {
    const claims = ClaimsSchema.safeParse(payload);
    if (!claims.success)
      throw new AuthenticationError(`the token's claims are unusable: ${z.prettifyError(claims.error).replace(/\s*\n\s*/g, '; ')}`);
    const rawGroups = GroupsSchema.safeParse(claimAt(payload, this.settings.groupsClaim));
    if (!rawGroups.success) throw new AuthenticationError(`the token's "${this.settings.groupsClaim}" claim is not a list of group names`);
    const groups = rawGroups.data === undefined ? [] : typeof rawGroups.data === 'string' ? [rawGroups.data] : [...new Set(rawGroups.data)];
    const { sub, email, name, preferred_username } = claims.data;
    return {
      kind: 'user',
      sub,
      name: email ?? name ?? preferred_username ?? null,
      groups,
      reviewGroups: groups.filter((g) => this.settings.reviewGroups.includes(g)),
      admin: this.settings.adminGroup !== null && groups.includes(this.settings.adminGroup),
    };
  }
}

export function discoveryUrl(issuer: string): string {
  return new URL('.well-known/openid-configuration', issuer.endsWith('/') ? issuer : `${issuer}/`).href;
}

/** A claim by its exact name (namespaced claims are URLs with dots), else by a dotted path. */
function claimAt(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The 401 a verification failure is, or the 503 when the issuer's keys could not be read. */
function refusal(err: unknown): Error {
  if (err instanceof joseErrors.JWTExpired) {
    const exp = typeof err.payload.exp === 'number' ? ` at ${new Date(err.payload.exp * 1000).toISOString()}` : '';
    return new AuthenticationError(`the token expired${exp}; get a new one from your identity provider`, TOKEN_EXPIRED_REASON);
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) return new AuthenticationError(`the token was refused: ${err.message}`);
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid || !(err instanceof joseErrors.JOSEError)) {
    return unavailable(`could not read the issuer's signing keys (${errorMessage(err)})`);
  }
  if (err.code === joseErrors.JOSEError.code) {
    // jose's generic error is what a JWKS answered with other than 200 becomes.
    return unavailable(`could not read the issuer's signing keys (${err.message})`);
  }
  return new AuthenticationError(`the token was refused: ${err.message}`);
}

function unavailable(message: string): SessionsError {
  return new SessionsError('transient', `${message}; retry shortly`, 503);
}
