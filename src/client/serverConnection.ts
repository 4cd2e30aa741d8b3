// Everything talking to a session server takes: the HTTP client, its event stream and HttpBackend
// over them: the extension's way to the local session service and to a self-hosted server.
import { SessionsClient, type SessionsClientOptions } from './sessionsClient';
import { HttpBackend, type HttpBackendOptions } from './httpBackend';

export function connectServer(client: SessionsClientOptions, options: Omit<HttpBackendOptions, 'client'>): HttpBackend {
  return new HttpBackend({ ...options, client: new SessionsClient(client) });
}
