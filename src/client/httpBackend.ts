// SessionBackend over HTTP: the local session service (embedded, over its socket), our self-hosted
// server or Claude Code on the web, one client for all.
// The transport prefers the server's event stream (section 6) and falls back to polling by itself.
import type { AnyEvent, CreateSessionRequest, SessionResource } from '../core/protocol';
import type { SessionTransport } from '../core/transport';
import { backendOf, type BackendKind, type BackendLifecycle } from '../core/backendKinds';
import type { EventsSent, SessionBackend } from '../core/sessionBackend';
import type { SessionsClient } from './sessionsClient';
import { StreamingTransport, type StreamingTransportOptions } from './eventStream';

export interface HttpBackendOptions {
  client: SessionsClient;
  /** Follow sessions over the SSE stream (falls back to polling); false: plain polling. */
  preferStream: boolean;
  kind?: BackendKind;
  /** For people; defaults to "Server <url>" or the kind's label. */
  label?: string;
  /** A link a person can open for a session; defaults to the kind's (claude.ai/code/<id> on the web). */
  sessionLink?: (sessionId: string) => string | undefined;
  /** Tuning for the stream (backoff, failures before fallback, idle timeout). */
  stream?: Omit<StreamingTransportOptions, 'client'>;
}

export class HttpBackend implements SessionBackend {
  readonly kind: BackendKind;
  readonly label: string;
  readonly transport: SessionTransport;
  readonly client: SessionsClient;
  readonly lifecycle?: BackendLifecycle;
  private readonly streaming: StreamingTransport | undefined;
  private readonly link: ((sessionId: string) => string | undefined) | undefined;

  constructor(options: HttpBackendOptions) {
    this.client = options.client;
    this.kind = options.kind ?? 'server';
    const descriptor = backendOf(this.kind);
    this.label = options.label ?? (this.kind === 'server' ? `${descriptor.label} ${options.client.baseUrl}` : descriptor.label);
    this.link = options.sessionLink ?? descriptor.sessionLink;
    this.streaming = options.preferStream ? new StreamingTransport({ ...options.stream, client: options.client }) : undefined;
    this.transport = this.streaming ?? options.client;
    if (descriptor.lifecycle) this.lifecycle = descriptor.lifecycle;
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

  sendEvents(sessionId: string, events: AnyEvent[], signal?: AbortSignal): Promise<EventsSent> {
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
