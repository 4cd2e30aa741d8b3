// Names shared by the startup bootstrap and the rest of the extension, in a module with no
// imports: the bootstrap reads them without loading the rest.

/** workspaceState: the followed sessions, re-attached after a reload. */
export const PERSISTED_SESSIONS_KEY = 'ultraplan.sessions.v1';

/** workspaceState: which session the review panel showed while it was open. */
export const REVIEW_PANEL_KEY = 'ultraplan.reviewPanel.v1';

/** workspaceState: the last review's comment threads and the dismissed findings (core/review/persisted.ts). */
export const REVIEW_THREADS_KEY = 'ultraplan.reviewThreads.v1';

/** Set on globalThis when the bootstrap registered the @ultraplan chat participant (it forwards to the rest). */
export const CHAT_STAND_IN = Symbol.for('ultraplan.chatParticipantStandIn');

/** workspaceState: each followed session's last verification against its approved plan (extension/review/panelVerifications.ts). */
export const VERIFICATIONS_KEY = 'ultraplan.verifications.v1';
