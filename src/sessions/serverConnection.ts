// Everything talking to a session server takes: the HTTP client, its event stream and HttpBackend
// over them. The extension imports it with `await import()` when it first follows a server, so it
// is a chunk of its own: the demo and the ACP agents never load it.
import { SessionsClient, type SessionsClientOptions } from './client';
import { HttpBackend, type HttpBackendOptions } from './httpBackend';

export function connectServer(client: SessionsClientOptions, options: Omit<HttpBackendOptions, 'client'>): HttpBackend {
  return new HttpBackend({ ...options, client: new SessionsClient(client) });
}
