// fetch over a Unix socket (or a Windows named pipe), for SessionsClient and its event stream:
// node's own fetch cannot take a socket path without undici's dispatcher, which VS Code's
// extension host does not expose. A request goes out on node:http with `socketPath`; the answer
// comes back as a web Response whose body streams (the event stream reads it as it arrives).
import * as http from 'node:http';
import { Readable } from 'node:stream';

/** The host name requests carry: the server's request guard accepts it for a socket. */
export const SOCKET_HOST = 'localhost';

export function socketFetch(socketPath: string): typeof fetch {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      const headers = new Headers(init?.headers);
      headers.set('host', SOCKET_HOST);
      const body = init?.body;
      if (body !== undefined && body !== null && typeof body !== 'string') {
        return reject(new TypeError('socketFetch sends string bodies only'));
      }
      const request = http.request({
        socketPath,
        // A connection of its own for each request, never one kept alive from before: a pooled
        // socket to a service that died since fails mid-request (EPIPE, ECONNRESET), where a new
        // connect says plainly that nothing listens (ENOENT, ECONNREFUSED) and the request was
        // never sent, so it can be sent to the service started again (localService.ts). A
        // connect on a local socket costs little; idle connections would also keep the service
        // from its idle exit.
        agent: false,
        method: init?.method ?? 'GET',
        path: `${url.pathname}${url.search}`,
        headers: Object.fromEntries(headers.entries()),
      });
      const onAbort = () => request.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      let answered = false;
      request.on('error', (err) => {
        signal?.removeEventListener('abort', onAbort);
        if (answered) return;
        // As undici words it, so callers classify socket errors the same way (cause.code).
        reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: err }));
      });
      request.on('response', (response) => {
        answered = true;
        const status = response.statusCode ?? 500;
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
          else if (value !== undefined) responseHeaders.set(name, value);
        }
        response.on('close', () => signal?.removeEventListener('abort', onAbort));
        const empty = status === 204 || status === 304 || (init?.method ?? 'GET').toUpperCase() === 'HEAD';
        if (empty) response.resume();
        const stream = empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
        resolve(new Response(stream, { status, statusText: response.statusMessage ?? '', headers: responseHeaders }));
      });
      request.end(body ?? undefined);
    });
}
