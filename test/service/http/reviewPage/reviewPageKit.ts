// What the review page's tests share: the page's bundle built when its sources are newer, a
// review link minted the way Copy Review Link asks for one, and the page's requests forged at the
// HTTP level (with whatever Origin, Sec-Fetch-Site, cookie and CSRF token a test wants); on a team
// server, its flags, a user's API call and a sign-in on the provider's own pages.
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { REPO_ROOT, newestMtime, type ServerProcess } from '../../../support/serverProcess';
import { TEST_API_SCOPE, TEST_AUDIENCE, TEST_CLIENT_ID, TEST_USERS } from '../../../support/openidProvider';
import { waitFor } from '../../../support/wait';

let pageBuilt = false;

/** Rebuilds dist/review-page.js when the webview, the core or the styles are newer (once per process). */
export function ensureReviewPageBuilt(): void {
  if (pageBuilt) return;
  let builtAt = 0;
  try {
    builtAt = statSync(path.join(REPO_ROOT, 'dist', 'review-page.js')).mtimeMs;
  } catch {
    /* missing: build */
  }
  const newest = Math.max(...['src/webview', 'src/core', 'media'].map((dir) => newestMtime(path.join(REPO_ROOT, dir))));
  if (newest > builtAt) execFileSync(process.execPath, ['esbuild.mjs', '--only=review-page'], { cwd: REPO_ROOT, stdio: 'inherit' });
  pageBuilt = true;
}

export interface MintedLink {
  path: string;
  /** The whole link, from a server started with --public-url. */
  url?: string;
  one_time: boolean;
  expires_at: string | null;
}

/** Asks the server for a review link as the extension's Copy Review Link does (the bearer token). */
export async function mintLink(server: ServerProcess, sessionId: string): Promise<MintedLink> {
  const response = await fetch(`${server.url}/v1/ultraplan/review-links`, {
    method: 'POST',
    headers: server.headers({ 'content-type': 'application/json' }),
    body: JSON.stringify({ session_id: sessionId }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`minting a review link failed: ${response.status} ${text}`);
  return JSON.parse(text) as MintedLink;
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request exactly as given (node:http: no header of its own added or refused). */
export function rawRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    // A server that never answers fails the test with the request named, not at mocha's timeout.
    req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${url}: no answer within 20 s`)));
    req.end(body);
  });
}

/** What a browser sends from the page itself. */
export function sameOrigin(server: ServerProcess): Record<string, string> {
  return { origin: server.url, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' };
}

/** Opens a one-time link as the page's form does; resolves with the cookie it sets (name=value). */
export async function exchangeLink(server: ServerProcess, link: MintedLink): Promise<{ answer: RawAnswer; cookie: string | undefined }> {
  const url = new URL(link.path, server.url);
  const token = url.searchParams.get('link') ?? '';
  const answer = await rawRequest(
    `${server.url}${url.pathname}/open`,
    'POST',
    { ...sameOrigin(server), 'sec-fetch-mode': 'navigate', 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({ link: token }).toString(),
  );
  const cookie = answer.headers['set-cookie']?.[0]?.split(';')[0];
  return { answer, cookie };
}

/** The CSRF token the page was given (its meta tag), read as the page's own script reads it. */
export async function pageCsrfToken(server: ServerProcess, sessionId: string, cookie: string): Promise<string> {
  const answer = await rawRequest(`${server.url}/review/${sessionId}`, 'GET', {
    'sec-fetch-site': 'same-origin',
    'sec-fetch-mode': 'navigate',
    cookie,
  });
  const match = /<meta name="ultraplan-csrf" content="([^"]+)">/.exec(answer.body);
  if (!match?.[1]) throw new Error(`the page has no CSRF token (${answer.status}): ${answer.body.slice(0, 300)}`);
  return match[1];
}

/** The flags of a team server whose people sign in on the tests' OpenID provider at `issuer`. */
export function teamServerArgs(issuer: string): string[] {
  return [
    '--oidc-issuer',
    issuer,
    '--oidc-audience',
    TEST_AUDIENCE,
    '--oidc-client-id',
    TEST_CLIENT_ID,
    '--oidc-scopes',
    `openid email profile groups ${TEST_API_SCOPE}`,
  ];
}

/** A request of the API with a user's access token; the answer's JSON. */
export async function bearerCall(
  server: ServerProcess,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Signs `user` in on the provider's own pages from `link`; resolves back on the link's page. */
export async function signInOnProvider(page: Page, link: string, user: 'alice' | 'bob', issuer: string): Promise<void> {
  await page.goto(link);
  await page.waitForURL((url) => url.origin === issuer);
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill(TEST_USERS[user]?.password ?? '');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await waitFor(
    async () => {
      const at = new URL(page.url());
      if (at.href === link) return true;
      if (at.origin === issuer) {
        const allow = page.getByRole('button', { name: 'Allow' });
        if ((await allow.count()) > 0) await allow.click().catch(() => {});
      }
      return undefined;
    },
    { message: `${user} back on ${link}`, timeoutMs: 30_000 },
  );
}
