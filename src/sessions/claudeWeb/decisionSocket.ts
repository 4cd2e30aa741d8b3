// The second way a decision reaches Claude Code on the web: the session's WebSocket
// (/v1/sessions/ws/{id}/subscribe, PROTOCOL.md section 1), where Claude Code itself sends its
// control_responses. Used only when the service refuses them over HTTP. A decision counts as sent
// only when the socket was accepted (so the login and organization were), every frame was
// written, and the socket did not then close with an error; an echo of the response confirms it.
import type WebSocketClass from 'ws';
import type { AnyEvent } from '../../core/protocol';

export interface SocketSendOptions {
  baseUrl: string;
  sessionId: string;
  organizationUuid: string;
  /** Authorization, the CCR headers and x-organization-uuid; read when connecting. */
  headers: () => Promise<Record<string, string>>;
  events: AnyEvent[];
  /** Bound on the upgrade. */
  connectTimeoutMs?: number;
  /** After the frames are written: how long a close with an error still counts as a refusal. */
  confirmWindowMs?: number;
  signal?: AbortSignal;
}

export interface SocketDelivery {
  /** True when the service echoed every control_response (by request_id) back on the socket. */
  confirmed: boolean;
}

/** Raised when the socket did not take the events. The message is for people and holds no token. */
export class SocketSendError extends Error {
  override readonly name = 'SocketSendError';
}

export function sessionSocketUrl(baseUrl: string, sessionId: string, organizationUuid: string): URL {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/sessions/ws/${encodeURIComponent(sessionId)}/subscribe`);
  url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
  url.searchParams.set('organization_uuid', organizationUuid);
  return url;
}

export async function sendEventsOverSessionSocket(options: SocketSendOptions): Promise<SocketDelivery> {
  options.signal?.throwIfAborted();
  const url = sessionSocketUrl(options.baseUrl, options.sessionId, options.organizationUuid);
  const headers = await options.headers();
  const awaiting = new Set<string>();
  for (const event of options.events) {
    const response = (event as { response?: { request_id?: unknown } }).response;
    if (event.type === 'control_response' && typeof response?.request_id === 'string') awaiting.add(response.request_id);
  }
  const expected = awaiting.size;
  // ws is loaded when a decision first goes over the socket (dist/vendor-ws.js in the bundles).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const WebSocket = require('ws') as typeof WebSocketClass;
  const socket = new WebSocket(url, { headers, handshakeTimeout: options.connectTimeoutMs ?? 10_000, followRedirects: false });

  return new Promise<SocketDelivery>((resolve, reject) => {
    let settled = false;
    let written = false;
    let confirmTimer: NodeJS.Timeout | undefined;
    const finish = (outcome: { ok: SocketDelivery } | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(confirmTimer);
      options.signal?.removeEventListener('abort', onAbort);
      if (socket.readyState === WebSocket.OPEN) socket.close(1000, 'done');
      else if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
      if ('ok' in outcome) resolve(outcome.ok);
      else reject(new SocketSendError(outcome.error));
    };
    const onAbort = () => finish({ error: 'the send was cancelled' });
    options.signal?.addEventListener('abort', onAbort, { once: true });

    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      finish({ error: `the session's WebSocket was refused (HTTP ${response.statusCode ?? '?'})` });
    });
    socket.on('error', (err) => finish({ error: `the session's WebSocket failed (${err.message.replace(/Bearer\s+\S+/gi, 'Bearer [redacted]')})` }));
    socket.on('open', () => {
      let pending = options.events.length;
      for (const event of options.events) {
        socket.send(JSON.stringify(event), (err) => {
          if (err) {
            finish({ error: `a frame could not be written to the session's WebSocket (${err.message})` });
            return;
          }
          pending -= 1;
          if (pending > 0) return;
          written = true;
          if (awaiting.size === 0) {
            // Nothing to wait for, or every echo already came in before the write callbacks.
            finish({ ok: { confirmed: expected > 0 } });
            return;
          }
          confirmTimer = setTimeout(() => finish({ ok: { confirmed: false } }), options.confirmWindowMs ?? 1500);
        });
      }
    });
    socket.on('message', (data) => {
      let frame: unknown;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return; // not ours to judge: the socket also carries pings and other frames
      }
      const f = frame as { type?: unknown; response?: { request_id?: unknown } };
      if (f.type === 'control_response' && typeof f.response?.request_id === 'string') awaiting.delete(f.response.request_id);
      if (written && awaiting.size === 0) finish({ ok: { confirmed: true } });
    });
    socket.on('close', (code, reason) => {
      const why = reason.toString().slice(0, 200);
      if (written && code === 1000) finish({ ok: { confirmed: awaiting.size === 0 } });
      else finish({ error: `the session's WebSocket closed before taking the decision (code ${code}${why ? `: ${why}` : ''})` });
    });
  });
}
