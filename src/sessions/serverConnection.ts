// Everything talking to a session server takes: the HTTP client, its event stream and HttpBackend
// over them. A file of its own in the extension's bundles (dist/server-client.js,
// scripts/lazy-files.cjs), loaded through serverConnectionLoader.ts when the extension first
// follows a server: the demo and the ACP agents never need it.
import { SessionsClient, type SessionsClientOptions } from './client';
import { HttpBackend, type HttpBackendOptions } from './httpBackend';

export function connectServer(client: SessionsClientOptions, options: Omit<HttpBackendOptions, 'client'>): HttpBackend {
  return new HttpBackend({ ...options, client: new SessionsClient(client) });
}
