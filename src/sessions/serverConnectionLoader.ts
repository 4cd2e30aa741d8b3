// Loads serverConnection.ts (the HTTP client and HttpBackend) the first time a server backend is
// made; under tsx (tests) it is the source module.
import type { SessionsClientOptions } from './client';
import type { HttpBackend, HttpBackendOptions } from './httpBackend';

type ServerConnectionModule = typeof import('./serverConnection');

let loaded: ServerConnectionModule | undefined;

/** An HttpBackend over a new SessionsClient. */
export function connectServer(client: SessionsClientOptions, options: Omit<HttpBackendOptions, 'client'>): HttpBackend {
  loaded ??= require('./serverConnection') as ServerConnectionModule;
  return loaded.connectServer(client, options);
}
