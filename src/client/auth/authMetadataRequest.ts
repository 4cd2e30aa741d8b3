// Reads what a team server says its users sign in with (src/core/authMetadata.ts), from its
// unauthenticated metadata route, before any token exists.
import { AUTH_METADATA_PATH, parseAuthMetadata, type AuthMetadata } from '../../core/authMetadata';
import { errorMessage } from '../../core/errors';

const METADATA_TIMEOUT_MS = 10_000;

export async function fetchAuthMetadata(serverUrl: string, signal?: AbortSignal): Promise<AuthMetadata> {
  const where = new URL(AUTH_METADATA_PATH, serverUrl.endsWith('/') ? serverUrl : `${serverUrl}/`).href;
  const timeout = AbortSignal.timeout(METADATA_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(where, {
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
  } catch (err) {
    throw new Error(`could not reach ${where} (${errorMessage(err)})`);
  }
  if (response.status === 404) {
    await response.body?.cancel();
    throw new Error(`${serverUrl} offers no sign-in (it has no OpenID issuer configured); paste a token instead`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${where} answered HTTP ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new Error(`${where} did not answer JSON`);
  }
  const parsed = parseAuthMetadata(body);
  if (!parsed.ok) throw new Error(`${where} answered metadata that cannot be used: ${parsed.problem}`);
  return parsed.metadata;
}
