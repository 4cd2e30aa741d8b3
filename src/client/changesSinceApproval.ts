// The changes in a session's workspace since its plan was approved, from our own service or
// server (`GET /v1/ultraplan/sessions/{id}/changes`, docs/execution.md), parsed at the boundary.
// Apart from SessionsClient so that it loads with its first use, not with the extension.
import { changesPath, ChangesSinceApprovalSchema, type ChangesSinceApproval } from '../core/changesSinceApproval';
import type { SessionBackend } from '../core/sessionBackend';
import type { SessionsClient } from './sessionsClient';

/**
 * The session's changes since approval. No record (not a git repository, nothing approved yet)
 * is a `conflict` SessionsError carrying the server's reason.
 */
export async function readChangesSinceApproval(
  client: SessionsClient,
  sessionId: string,
  signal?: AbortSignal,
): Promise<ChangesSinceApproval> {
  // Either id form names the session (the server reads cse_ as session_).
  const path = changesPath(sessionId);
  const body = await client.http.json({ method: 'GET', path, signal, subject: `session ${sessionId}` });
  return client.http.check(ChangesSinceApprovalSchema, body, 'changes since approval');
}

/**
 * The client of the service or server that keeps the session's record: an HTTP backend's own, or
 * for the embedded backend the client of whichever local service holds the session.
 */
export async function recordClientFor(backend: SessionBackend, sessionId: string): Promise<SessionsClient | undefined> {
  const keeper = backend as SessionBackend & {
    client?: SessionsClient;
    clientFor?: (sessionId: string) => Promise<SessionsClient | undefined>;
  };
  return keeper.client ?? (await keeper.clientFor?.(sessionId));
}
