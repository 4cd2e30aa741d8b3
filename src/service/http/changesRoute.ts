// `GET /v1/ultraplan/sessions/{id}/changes`: the unified diff of the session's workspace since its
// plan was approved (core/changesSinceApproval.ts). Read through the request's scoped store, so
// it answers exactly who may read the session (everyone else as every route does); 409 says in
// words why there is no diff: no record (not a git repository, nothing approved yet), or too large.
import { SessionsError } from '../../core/errors';
import type { ChangesSinceApproval } from '../../core/changesSinceApproval';
import type { ServerStore } from '../store/serverStore';

/** The session's changes since approval, or the SessionsError that says why there are none. */
export async function changesRoute(store: ServerStore, method: string, id: string): Promise<ChangesSinceApproval> {
  if (method !== 'GET') throw new SessionsError('bad_request', 'method not allowed here; allowed: GET', 405);
  const outcome = await store.changesSinceApproval(id);
  switch (outcome.kind) {
    case 'changes':
      return outcome.changes;
    case 'no_record':
      throw new SessionsError('conflict', outcome.reason, 409);
    case 'failed':
      throw new SessionsError('conflict', `the changes since approval could not be read: ${outcome.reason}`, 409);
  }
}
