// workspaceState keys, in a module with no imports: the startup bootstrap reads
// them without loading the rest of the extension.

/** workspaceState: the followed sessions, re-attached after a reload. */
export const PERSISTED_SESSIONS_KEY = 'ultraplan.sessions.v1';

/** workspaceState: which session the review panel showed while it was open. */
export const REVIEW_PANEL_KEY = 'ultraplan.reviewPanel.v1';
