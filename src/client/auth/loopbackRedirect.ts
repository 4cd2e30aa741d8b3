// The redirect of a native app's code flow (RFC 8252 7.3): a one-shot HTTP listener on
// 127.0.0.1 at a port the system picks, for the one sign-in in progress. It answers only the
// callback carrying that sign-in's `state`; a request with another state (a stale tab, another
// program on this machine guessing) is refused and the listener keeps waiting. It closes after
// the answer, on timeout, or when the sign-in is cancelled.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export const CALLBACK_PATH = '/callback';

export interface LoopbackRedirect {
  /** `http://127.0.0.1:<port>/callback`, the redirect_uri to register with the request. */
  readonly redirectUri: string;
  /** The callback's URL (its query holds `code`, `state`, `iss`, or `error`). */
  readonly callback: Promise<URL>;
  close(): void;
}

export interface LoopbackOptions {
  expectedState: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export class SignInCancelledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignInCancelledError';
  }
}

export async function listenForRedirect(options: LoopbackOptions): Promise<LoopbackRedirect> {
  let settle: { resolve: (url: URL) => void; reject: (err: Error) => void } | undefined;
  const callback = new Promise<URL>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // A caller that never awaits (closed early) must not leave an unhandled rejection behind.
  callback.catch(() => {});

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return answer(res, 404, 'Not found.');
    if (url.searchParams.get('state') !== options.expectedState) {
      return answer(res, 400, 'This answer does not belong to the sign-in in progress. Start the sign-in again from VS Code.');
    }
    const error = url.searchParams.get('error');
    answer(
      res,
      200,
      error
        ? `Sign-in failed: ${url.searchParams.get('error_description') ?? error}. You can close this tab.`
        : 'Signed in. You can close this tab and go back to VS Code.',
    );
    settle?.resolve(url);
    done();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const timer = setTimeout(() => {
    settle?.reject(new SignInCancelledError(`no answer from the browser within ${Math.round(options.timeoutMs / 1000)} s`));
    done();
  }, options.timeoutMs);
  const onAbort = () => {
    settle?.reject(new SignInCancelledError('sign-in cancelled'));
    done();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });

  function done(): void {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    server.close();
    server.closeIdleConnections();
  }
  if (options.signal?.aborted) onAbort();

  return {
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    callback,
    close: () => {
      settle?.reject(new SignInCancelledError('sign-in closed'));
      done();
    },
  };
}

function answer(res: http.ServerResponse, status: number, text: string): void {
  const body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Ultraplan sign-in</title></head><body><p>${escapeHtml(text)}</p></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'",
    connection: 'close',
  });
  res.end(body);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
