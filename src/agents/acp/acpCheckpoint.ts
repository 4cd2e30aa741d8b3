// What an ACP agent saves in its session's log for a restart of the host: the agent's own session
// id (session/load takes it), whether its plan was approved (the loaded session then carries it
// out instead of planning), and whether it is resumed with session/load at all (its quirks and
// its capability, known at initialize). Read back with a check: a log may hold another agent's state.
export interface AcpCheckpoint {
  sessionId: string;
  approved: boolean;
  loadable: boolean;
}

export function parseAcpCheckpoint(checkpoint: unknown): AcpCheckpoint | undefined {
  const acp = (checkpoint as { acp?: unknown } | null | undefined)?.acp as Partial<AcpCheckpoint> | undefined;
  if (!acp || typeof acp.sessionId !== 'string' || acp.sessionId.length === 0 || typeof acp.approved !== 'boolean') return undefined;
  return { sessionId: acp.sessionId, approved: acp.approved, loadable: acp.loadable === true };
}

/** What an agent saved last, saved again only when it changes. */
export class SavedSession {
  #saved: AcpCheckpoint | undefined;
  /** Whether the agent is resumed with session/load (known at initialize). */
  loadable = false;

  constructor(private readonly write: (state: { acp: AcpCheckpoint }) => void) {}

  /** Whether the saved session's plan was approved; undefined before anything was saved. */
  get approved(): boolean | undefined {
    return this.#saved?.approved;
  }

  save(sessionId: string, approved: boolean): void {
    if (this.#saved?.sessionId === sessionId && this.#saved.approved === approved) return;
    this.#saved = { sessionId, approved, loadable: this.loadable };
    this.write({ acp: this.#saved });
  }
}
