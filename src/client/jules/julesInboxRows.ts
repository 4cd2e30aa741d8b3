// What the inbox's Jules group shows, from the listing's state (julesInboxListing.ts): each of the
// key's sessions, newest first, with its state in words (a plan awaiting approval reads as waiting
// for the person's decision), its age, and whether this window follows it; a click opens the
// followed session's review, or attaches to it (which opens its review). A failed listing is a row
// of its own above the sessions last listed: what went wrong and when it is tried again (a refused
// key: a click sets it). Pure, so the words and the order are tested without VS Code.
import { BACKENDS } from '../../core/backendKinds';
import { PHASE_LABELS, type Phase } from '../../core/phase';
import { displayTitle, formatAge } from '../../core/sessionListing';
import type { JulesInboxState } from './julesInboxListing';
import type { JulesSession, JulesSessionState } from './schemas';

/** Rows shown at most (the newest); the rest are counted in the group's description. */
export const MAX_JULES_INBOX_ROWS = 50;

/** sessions.State in words, as the inbox's other rows word a phase. */
export const JULES_STATE_WORDS: Readonly<Record<JulesSessionState, string>> = {
  STATE_UNSPECIFIED: 'state not given',
  QUEUED: 'queued',
  PLANNING: 'planning',
  AWAITING_PLAN_APPROVAL: 'plan ready: waiting for your decision',
  AWAITING_USER_FEEDBACK: 'waiting for your reply',
  IN_PROGRESS: 'working',
  PAUSED: 'paused',
  FAILED: 'failed',
  COMPLETED: 'completed',
};

/** States that wait on the person. */
const WAITING: ReadonlySet<string> = new Set(['AWAITING_PLAN_APPROVAL', 'AWAITING_USER_FEEDBACK']);

const ICONS: Readonly<Record<JulesSessionState, string>> = {
  STATE_UNSPECIFIED: 'circle-outline',
  QUEUED: 'clock',
  PLANNING: 'loading~spin',
  AWAITING_PLAN_APPROVAL: 'checklist',
  AWAITING_USER_FEEDBACK: 'comment-discussion',
  IN_PROGRESS: 'loading~spin',
  PAUSED: 'debug-pause',
  FAILED: 'error',
  COMPLETED: 'pass',
};

/** What a click on a row does. */
export type JulesRowAction =
  | { kind: 'open'; key: string }
  | { kind: 'attach'; link: string }
  /** The key was refused: set it again. */
  | { kind: 'setKey' };

export interface JulesInboxRow {
  /** Unique in the tree. */
  id: string;
  label: string;
  description: string;
  tooltip: string;
  /** A codicon id. */
  icon: string;
  /** Coloured as the inbox colours a session that needs the person, or an error. */
  tone: 'attention' | 'error' | undefined;
  action: JulesRowAction | undefined;
}

export interface JulesInboxView {
  label: string;
  description: string;
  tooltip: string;
  rows: JulesInboxRow[];
}

/** A Jules session this window follows: its key in the inbox and its phase. */
export interface FollowedJules {
  key: string;
  phase: Phase;
}

function stateWords(state: string | undefined): string {
  if (state === undefined) return JULES_STATE_WORDS.STATE_UNSPECIFIED;
  return (JULES_STATE_WORDS as Record<string, string | undefined>)[state] ?? `state ${state.toLowerCase().replace(/_/g, ' ')}`;
}

function sessionRow(session: JulesSession, followed: FollowedJules | undefined, now: number): JulesInboxRow {
  const state = session.state;
  const waiting = state !== undefined && WAITING.has(state);
  const changed = Date.parse(session.updateTime ?? session.createTime ?? '');
  const words = stateWords(state);
  const parts = [words, ...(Number.isNaN(changed) ? [] : [formatAge(now - changed)])];
  if (followed) parts.push(`followed here: ${PHASE_LABELS.words[followed.phase]}`);
  const title = displayTitle(session.title ?? session.prompt?.split('\n')[0]?.slice(0, 120) ?? '', `Jules session ${session.id}`);
  const link = BACKENDS.jules.sessionLink(session.id);
  return {
    id: `jules:${session.id}`,
    label: title,
    description: parts.join(' · '),
    tooltip: [
      title,
      `Jules: ${words}`,
      followed ? 'Followed in this window: click to open its review.' : 'Click to follow it here and open its review.',
      link,
    ].join('\n'),
    icon: (ICONS as Record<string, string | undefined>)[state ?? 'STATE_UNSPECIFIED'] ?? 'circle-outline',
    tone: waiting ? 'attention' : state === 'FAILED' ? 'error' : undefined,
    action: followed ? { kind: 'open', key: followed.key } : { kind: 'attach', link },
  };
}

/** A wait in words: "20 s", "3 min". */
function inWords(ms: number): string {
  return ms < 60_000 ? `${Math.max(1, Math.ceil(ms / 1_000))} s` : `${Math.ceil(ms / 60_000)} min`;
}

function failureRow(state: Extract<JulesInboxState, { kind: 'failed' }>, now: number): JulesInboxRow {
  const when =
    state.retryAt === undefined
      ? 'the key was refused: click to set it'
      : state.retryAt <= now
        ? 'trying again now'
        : `trying again in ${inWords(state.retryAt - now)}`;
  return {
    id: 'jules:listing-failed',
    label: 'Could not list the Jules sessions',
    description: when,
    tooltip: `${state.message}\n${state.refused ? 'Click to set the Jules API key.' : 'It is tried again by itself.'}`,
    icon: 'warning',
    tone: 'error',
    action: state.refused ? { kind: 'setKey' } : undefined,
  };
}

/**
 * The group and its rows. `followed` answers for a session id whether this window follows it.
 * Newest first as listed; at most `max` sessions.
 */
export function julesInboxView(
  state: JulesInboxState,
  followed: (sessionId: string) => FollowedJules | undefined,
  now: number,
  max: number = MAX_JULES_INBOX_ROWS,
): JulesInboxView {
  const label = BACKENDS.jules.label;
  const tooltip = `Your Jules sessions (${label}'s own list for the key set with "Ultraplan: Set Jules API Key…"), newest first. Click one to review it here.`;
  if (state.kind === 'listing') {
    return {
      label,
      description: 'listing…',
      tooltip,
      rows: [
        {
          id: 'jules:listing',
          label: 'Listing the Jules sessions…',
          description: '',
          tooltip,
          icon: 'loading~spin',
          tone: undefined,
          action: undefined,
        },
      ],
    };
  }
  const sessions = state.sessions;
  const shown = sessions.slice(0, max).map((s) => sessionRow(s, followed(s.id), now));
  const waiting = sessions.filter((s) => s.state !== undefined && WAITING.has(s.state)).length;
  const count = sessions.length > max ? `${max} of ${sessions.length}` : String(sessions.length);
  const description = [
    count,
    ...(waiting > 0 ? [`${waiting} waiting for you`] : []),
    ...(state.kind === 'failed' ? ['not up to date'] : []),
  ].join(' · ');
  const rows = state.kind === 'failed' ? [failureRow(state, now), ...shown] : shown;
  if (rows.length === 0) {
    rows.push({
      id: 'jules:none',
      label: 'No Jules sessions for this key',
      description: '',
      tooltip,
      icon: 'info',
      tone: undefined,
      action: undefined,
    });
  }
  return { label, description, tooltip, rows };
}
