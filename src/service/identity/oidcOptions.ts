// The server's OIDC settings from its command line and environment (the names a deployment's
// Secrets use: docs/identity.md). A flag wins over its environment variable.
import { isIP } from 'node:net';
import { AUTH_METADATA_PATH, AuthMetadataSchema } from '../../core/authMetadata';
import { DEFAULT_CLOCK_SKEW_SECONDS, DEFAULT_GROUPS_CLAIM, type OidcSettings } from './oidcAuthenticator';

export const OIDC_ARG_OPTIONS = {
  'oidc-issuer': { type: 'string' },
  'oidc-audience': { type: 'string' },
  'oidc-jwks-url': { type: 'string' },
  'oidc-groups-claim': { type: 'string' },
  'oidc-review-groups': { type: 'string' },
  'oidc-admin-group': { type: 'string' },
  'oidc-clock-skew-seconds': { type: 'string' },
  'oidc-client-id': { type: 'string' },
  'oidc-scopes': { type: 'string' },
  'oidc-device-flow': { type: 'string' },
} as const;

/** The scopes asked for at sign-in when --oidc-scopes does not say: an id token and a refresh token. */
export const DEFAULT_SIGN_IN_SCOPES = ['openid', 'offline_access', 'email', 'profile'];

export const OIDC_HELP = `  --oidc-issuer URL   per-user tokens from this OpenID Connect issuer (else ULTRAPLAN_OIDC_ISSUER):
                      JWTs verified against its keys; each user sees only their own sessions.
                      The shared token is then not accepted
  --oidc-audience AUD the audience tokens must carry (else ULTRAPLAN_OIDC_AUDIENCE); required
                      with --oidc-issuer
  --oidc-jwks-url URL the issuer's keys (else ULTRAPLAN_OIDC_JWKS_URL; default: the jwks_uri of
                      ISSUER/.well-known/openid-configuration)
  --oidc-groups-claim NAME
                      the claim listing a user's groups (else ULTRAPLAN_OIDC_GROUPS_CLAIM;
                      default ${DEFAULT_GROUPS_CLAIM})
  --oidc-review-groups A,B
                      groups whose members list, read, stream and decide each other's sessions
                      (else ULTRAPLAN_OIDC_REVIEW_GROUPS)
  --oidc-admin-group G
                      members see and decide every session (else ULTRAPLAN_OIDC_ADMIN_GROUP)
  --oidc-clock-skew-seconds N
                      tolerated clock difference with the issuer (default ${DEFAULT_CLOCK_SKEW_SECONDS}, at most 600)
  --oidc-client-id ID the public client the extension signs in as (else ULTRAPLAN_OIDC_CLIENT_ID);
                      published without a token at ${AUTH_METADATA_PATH}, so a person only
                      sets the server's URL
  --oidc-scopes LIST  scopes the extension asks for (default: ${DEFAULT_SIGN_IN_SCOPES.join(' ')})
  --oidc-device-flow yes|no
                      whether the issuer lets that client use the device code grant (default no)
`;

type OidcValues = { [K in keyof typeof OIDC_ARG_OPTIONS]?: string | undefined };

export class OidcOptionsError extends Error {}

/** The settings, or null when no issuer is configured (the shared token then applies). */
export function oidcSettingsFrom(values: OidcValues, env: NodeJS.ProcessEnv = process.env): OidcSettings | null {
  const read = (flag: keyof OidcValues, name: string): string | undefined => {
    const value = (values[flag] ?? env[name])?.trim();
    return value ? value : undefined;
  };
  const issuer = read('oidc-issuer', 'ULTRAPLAN_OIDC_ISSUER');
  const others = (Object.keys(OIDC_ARG_OPTIONS) as Array<keyof OidcValues>).filter(
    (flag) => flag !== 'oidc-issuer' && values[flag] !== undefined,
  );
  if (issuer === undefined) {
    if (others.length > 0) throw new OidcOptionsError(`--${others[0]} needs --oidc-issuer (or ULTRAPLAN_OIDC_ISSUER)`);
    return null;
  }
  checkUrl('--oidc-issuer', issuer);
  const audience = read('oidc-audience', 'ULTRAPLAN_OIDC_AUDIENCE');
  if (audience === undefined)
    throw new OidcOptionsError(
      '--oidc-issuer needs --oidc-audience (or ULTRAPLAN_OIDC_AUDIENCE): the audience its tokens carry for this server',
    );
  const jwksUrl = read('oidc-jwks-url', 'ULTRAPLAN_OIDC_JWKS_URL') ?? null;
  if (jwksUrl !== null) checkUrl('--oidc-jwks-url', jwksUrl);
  const skewText = values['oidc-clock-skew-seconds'];
  if (skewText !== undefined && (!/^\d{1,3}$/.test(skewText) || Number(skewText) > 600)) {
    throw new OidcOptionsError(`--oidc-clock-skew-seconds must be an integer from 0 to 600, got ${JSON.stringify(skewText)}`);
  }
  return {
    issuer,
    audience,
    jwksUrl,
    groupsClaim: read('oidc-groups-claim', 'ULTRAPLAN_OIDC_GROUPS_CLAIM') ?? DEFAULT_GROUPS_CLAIM,
    reviewGroups: (read('oidc-review-groups', 'ULTRAPLAN_OIDC_REVIEW_GROUPS') ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean),
    adminGroup: read('oidc-admin-group', 'ULTRAPLAN_OIDC_ADMIN_GROUP') ?? null,
    clockSkewSeconds: skewText === undefined ? DEFAULT_CLOCK_SKEW_SECONDS : Number(skewText),
    ...signInEntry(signInFrom(read('oidc-client-id', 'ULTRAPLAN_OIDC_CLIENT_ID'), values, audience)),
  };
}

/** The settings' sign-in, present only when the server offers one. */
function signInEntry(signIn: NonNullable<OidcSettings['signIn']> | null): Pick<OidcSettings, 'signIn'> {
  return signIn ? { signIn } : {};
}

function signInFrom(clientId: string | undefined, values: OidcValues, audience: string): NonNullable<OidcSettings['signIn']> | null {
  if (clientId === undefined) {
    for (const flag of ['oidc-scopes', 'oidc-device-flow'] as const) {
      if (values[flag] !== undefined) throw new OidcOptionsError(`--${flag} needs --oidc-client-id: it describes how that client signs in`);
    }
    return null;
  }
  const scopes = values['oidc-scopes']?.split(/[\s,]+/).filter(Boolean) ?? DEFAULT_SIGN_IN_SCOPES;
  const device = values['oidc-device-flow'];
  if (device !== undefined && device !== 'yes' && device !== 'no') {
    throw new OidcOptionsError(`--oidc-device-flow is yes or no, got ${JSON.stringify(device)}`);
  }
  // The audience is the resource indicator when it is a URL (RFC 8707 names resources by URI).
  const resource = /^https?:\/\//.test(audience) ? audience : null;
  const metadata = AuthMetadataSchema.safeParse({
    issuer: 'https://issuer.invalid',
    client_id: clientId,
    scopes,
    ...(resource ? { resource } : {}),
  });
  if (!metadata.success) throw new OidcOptionsError(`--oidc-client-id or --oidc-scopes: ${metadata.error.issues[0]?.message ?? 'invalid'}`);
  return { clientId, scopes, resource, deviceAuthorization: device === 'yes' };
}

/** https, or http to a loopback address only (an issuer on this machine): keys must not travel in clear. */
function checkUrl(flag: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OidcOptionsError(`${flag} must be a URL, got ${JSON.stringify(value)}`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new OidcOptionsError(`${flag} must be an https:// URL (http:// only on a loopback address), got ${JSON.stringify(value)}`);
  }
}
