// --public-url: the origin people's browsers reach the server at, when that is not the address it
// listens on (a TLS proxy in front, replicas behind a load balancer). Review links, the issuer's
// redirect back and webhook links are built on it, and the review page is let in from it alone.
// An origin only: the page, its assets, its cookie (`__Host-`, which requires Path=/) and the
// API all live at the root, so a base path (https://example.com/plans) is refused rather than
// half supported; give the server a host name of its own.
import { isLoopbackHost } from '../../core/authMetadata';

export class PublicUrlError extends Error {}

/** The origin `value` names (`https://plans.example.com`, default port dropped), or why it is refused. */
export function parsePublicUrl(value: string): string {
  const shown = JSON.stringify(value.slice(0, 200));
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new PublicUrlError(`--public-url takes an origin such as https://plans.example.com, got ${shown}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new PublicUrlError(
      `--public-url must be https (http only for a loopback name such as http://127.0.0.1:8787, for tests), got ${shown}`,
    );
  }
  if (url.username !== '' || url.password !== '') throw new PublicUrlError(`--public-url must not carry a user or password, got ${shown}`);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || /[?#]/.test(value)) {
    throw new PublicUrlError(
      `--public-url is an origin without a path, query or fragment (the server is served at the root of its host name), got ${shown}`,
    );
  }
  return url.origin;
}
