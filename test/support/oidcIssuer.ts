// A stand-in for a team's OIDC issuer on 127.0.0.1: the discovery document and the JWKS, as an
// issuer publishes them (OpenID Connect Discovery 1.0, RFC 7517), and tokens signed with its
// private key by jose. Besides the honest tokens, the ones an attacker would make: signed by a
// key of their own under the issuer's kid, unsigned (`alg: none`), and HS256 with the issuer's
// public key as the HMAC secret (the key-confusion attack on servers that trust the header's alg).
import { createHmac } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

export interface TokenOptions {
  /** Seconds from now (negative: already expired). Default 600. */
  expiresIn?: number;
  issuer?: string;
  audience?: string | string[];
  /** Signs with this key instead of the issuer's (same kid in the header). */
  key?: CryptoKey;
}

export interface OidcIssuer {
  /** The issuer URL, as tokens carry it in `iss`. */
  readonly url: string;
  readonly jwksUrl: string;
  readonly audience: string;
  readonly kid: string;
  /** Requests the issuer answered, by path. */
  readonly requests: string[];
  /** A token for `sub` with these extra claims, signed by the issuer. */
  token(sub: string, claims?: JWTPayload, options?: TokenOptions): Promise<string>;
  /** The same token signed by a key of the attacker's, under the issuer's kid. */
  forged(sub: string, claims?: JWTPayload): Promise<string>;
  /** The token with `alg: none` and no signature. */
  unsigned(sub: string, claims?: JWTPayload): string;
  /** HS256 with the issuer's public key (its PEM text) as the HMAC secret. */
  hmacWithPublicKey(sub: string, claims?: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

export async function startOidcIssuer(options: { audience?: string; alg?: 'RS256' | 'ES256' } = {}): Promise<OidcIssuer> {
  const alg = options.alg ?? 'RS256';
  const audience = options.audience ?? 'ultraplan';
  const kid = 'issuer-key-1';
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const attacker = await generateKeyPair(alg);
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  const publicPem = await exportSPKI(publicKey);
  const requests: string[] = [];
  let url = '';
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      return json({
        issuer: url,
        jwks_uri: `${url}/jwks`,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [alg],
      });
    }
    if (req.method === 'GET' && path === '/jwks') return json({ keys: [jwk] });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const payload = (sub: string, claims: JWTPayload = {}, o: TokenOptions = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: o.issuer ?? url, aud: o.audience ?? audience, sub, iat: now, exp: now + (o.expiresIn ?? 600), ...claims };
  };
  const sign = (body: JWTPayload, key: CryptoKey) => new SignJWT(body).setProtectedHeader({ alg, kid, typ: 'JWT' }).sign(key);
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  return {
    url,
    jwksUrl: `${url}/jwks`,
    audience,
    kid,
    requests,
    token: (sub, claims, o = {}) => sign(payload(sub, claims, o), o.key ?? privateKey),
    forged: (sub, claims) => sign(payload(sub, claims), attacker.privateKey),
    unsigned: (sub, claims) => `${b64({ alg: 'none', typ: 'JWT', kid })}.${b64(payload(sub, claims))}.`,
    async hmacWithPublicKey(sub, claims) {
      const input = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(payload(sub, claims))}`;
      return `${input}.${createHmac('sha256', publicPem).update(input).digest('base64url')}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
