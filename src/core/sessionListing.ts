// How a listed session reads in "Attach to Session…": its title without the `ultraplan:` prefix
// every planning session carries, its status in words, its age. Pure, so the wording is tested.
import { PHASE_LABELS, type Phase } from './phase';
import type { SessionResource } from './protocol';

// A listed status alone cannot tell a finished session from one waiting for a message: both are
// `idle`. A session this window follows is described by its phase, which can.
const STATUS_WORDS: Record<string, string> = {
  running: 'running',
  idle: 'idle',
  requires_action: 'needs action',
  archived: 'archived',
};

/** A session's title for people: without the `ultraplan:` prefix; `fallback` when nothing is left. */
export function displayTitle(title: string, fallback: string): string {
  return title.replace(/^ultraplan:\s*/i, '').trim() || fallback;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago". */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms) || ms < 60_000) return 'just now';
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

/**
 * A picker row for a listed session: title; its phase when this window follows it (else its status),
 * age since its last change, whether followed; its id.
 */
export function describeListedSession(
  session: SessionResource,
  now: number,
  followedPhase: Phase | undefined,
): { title: string; description: string; detail: string } {
  const parts = [
    followedPhase !== undefined ? PHASE_LABELS.words[followedPhase] : (STATUS_WORDS[session.session_status] ?? session.session_status),
    formatAge(now - Date.parse(session.updated_at || session.created_at)),
  ];
  if (followedPhase !== undefined) parts.push('followed');
  return { title: displayTitle(session.title, '(untitled)'), description: parts.join(' · '), detail: session.id };
}
