// What a window knows of a session it did not start (Attach, a session another window started):
// only what the service returns for it.
import { agentLabelOf } from '../../core/agentLaunch';
import type { SessionResource } from '../../core/protocol';
import { displayTitle } from '../../core/sessionListing';
import type { FreshSession } from './followedSession';

/** Why an attached archived session takes no decisions (shown in its review). */
export const ARCHIVED_READ_ONLY =
  'Read-only: this session is archived, so it takes no more decisions. Its plans and history are shown as they were.';

export function attachedSession(resource: SessionResource, key: string, serverUrl?: string, readOnly?: string): FreshSession {
  const fresh: FreshSession = { key, sessionId: resource.id, title: displayTitle(resource.title, resource.id), demo: false };
  if (serverUrl) fresh.serverUrl = serverUrl;
  const agentLabel = agentLabelOf(resource.session_context);
  if (agentLabel !== undefined) fresh.agentLabel = agentLabel;
  const shownReadOnly = readOnly ?? (resource.session_status === 'archived' ? ARCHIVED_READ_ONLY : undefined);
  if (shownReadOnly !== undefined) fresh.readOnly = shownReadOnly;
  return fresh;
}
