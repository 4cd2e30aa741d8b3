// What a team server publishes, without a token, so that its address is all a person sets: the
// OpenID issuer to sign in with, the client id the extension is registered under there, the
// scopes to ask for, and the resource its access tokens must be for. The extension reads it
// before signing in; the server answers it from its --oidc-* settings.
import * as z from 'zod';

/** The unauthenticated route that answers AuthMetadata. */
export const AUTH_METADATA_PATH = '/v1/ultraplan/auth-metadata';

/** https, or http on a loopback address (a test issuer, a port-forward): the server's own rule. */
function secureOrLoopback(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

const ScopeSchema = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'a scope is one word of printable ASCII (RFC 6749 3.3)');

export const AuthMetadataSchema = z.strictObject({
  /** The issuer, exactly as its tokens carry it in `iss`. */
  issuer: z.string().max(2048).refine(secureOrLoopback, 'the issuer must be https:// (or http:// on a loopback address)'),
  /** The public client the extension signs in as (no secret: PKCE). */
  client_id: z.string().min(1).max(256),
  /** Asked for at sign-in; `openid` and `offline_access` (a refresh token) among them. */
  scopes: z.array(ScopeSchema).min(1).max(50),
  /**
   * The RFC 8707 resource indicator sent with every authorization and token request, so the
   * issuer makes the access token for this server's audience. Absent: the issuer does so by default.
   */
  resource: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  /**
   * Whether the client may use the device authorization grant (RFC 8628) at this issuer; the
   * extension uses it where a browser cannot reach back to the editor. Absent: false.
   */
  device_authorization: z.boolean().optional(),
});
export type AuthMetadata = z.infer<typeof AuthMetadataSchema>;

/** The metadata in a server's answer, or why it cannot be used. */
export function parseAuthMetadata(body: unknown): { ok: true; metadata: AuthMetadata } | { ok: false; problem: string } {
  const parsed = AuthMetadataSchema.safeParse(body);
  if (parsed.success) return { ok: true, metadata: parsed.data };
  return { ok: false, problem: z.prettifyError(parsed.error).replace(/\s*\n\s*/g, '; ') };
}
