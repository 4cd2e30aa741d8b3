// SessionBackend over HTTP: the local session service (embedded, over its socket), our self-hosted
// server or Claude Code on the web, one client for all.
// The transport prefers the server's event stream (section 6) and falls back to polling by itself.
import type { AnyEvent, CreateSessionRequest, SessionResource } from '../core/protocol';
import type { SessionTransport } from '../core/transport';
import type { BackendLifecycle, SessionBackend } from './backend';
import type { SessionsClient } from './client';
import { StreamingTransport, type StreamingTransportOptions } from './eventStream';

export interface HttpBackendOptions {
  client: SessionsClient;
  /** Follow sessions over the SSE stream (falls back to polling); false: plain polling. */
  preferStream: boolean;
  kind?: 'embedded' | 'server' | 'claude-web';
  /** For people; defaults to "Server <url>" or "Claude Code on the web". */
  label?: string;
  /** A link a person can open for a session; claude-web defaults to https://claude.ai/code/<id>. */
  sessionLink?: (sessionId: string) => string | undefined;
  /** When the extension archives this backend's sessions; absent: the extension's defaults. */
  lifecycle?: BackendLifecycle;
  /** Tuning for the stream (backoff, failures before fallback, idle timeout). */
  stream?: Omit<StreamingTransportOptions, 'client'>;
}

export class HttpBackend implements SessionBackend {
  readonly kind: 'embedded' | 'server' | 'claude-web';
  readonly label: string;
  readonly transport: SessionTransport;
  readonly client: SessionsClient;
  readonly lifecycle?: BackendLifecycle;
  private readonly streaming: StreamingTransport | undefined;
  private readonly link: ((sessionId: string) => string | undefined) | undefined;

  constructor(options: HttpBackendOptions) {
    this.client = options.client;
    this.kind = options.kind ?? 'server';
    this.label = options.label ?? (this.kind === 'claude-web' ? 'Claude Code on the web' : `Server ${options.client.baseUrl}`);
    this.link =
      options.sessionLink ?? (this.kind === 'claude-web' ? (id) => `https://claude.ai/code/${encodeURIComponent(id)}` : undefined);
    this.streaming = options.preferStream ? new StreamingTransport({ ...options.stream, client: options.client }) : undefined;
    this.transport = this.streaming ?? options.client;
    if (options.lifecycle) this.lifecycle = options.lifecycle;
  }

  createSession(request: CreateSessionRequest, signal?: AbortSignal): Promise<SessionResource> {
    return this.client.createSession(request, signal);
  }

  getSession(sessionId: string, signal?: AbortSignal): Promise<SessionResource> {
    return this.client.getSession(sessionId, signal);
  }

  listSessions(signal?: AbortSignal): Promise<SessionResource[]> {
    return this.client.listSessions(signal ? { signal } : {});
  }

  sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<void> {
    return this.client.sendEvents(sessionId, events, signal);
  }

  async archive(sessionId: string, signal?: AbortSignal): Promise<void> {
    await this.client.archive(sessionId, signal);
    this.streaming?.closeSession(sessionId);
  }

  sessionLink(sessionId: string): string | undefined {
    return this.link?.(sessionId);
  }

  /** The streaming transport, when streaming is preferred (stats for diagnostics and tests). */
  get streamingTransport(): StreamingTransport | undefined {
    return this.streaming;
  }

  async dispose(): Promise<void> {
    await this.streaming?.dispose();
  }
}
