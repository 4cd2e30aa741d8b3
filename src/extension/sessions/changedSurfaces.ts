// Which surfaces a change of the followed sessions reaches: the status bar only when something it
// shows changed, each context key only when its value did, and the inbox only for the rows that
// changed (the whole tree only when its grouping did). A snapshot keeps the parts that did not
// change as the same objects (core/sessionSnapshot.ts), so each comparison is by identity: a draft
// saved while typing reaches the panel and the store, and nothing here. No editor API, so the
// fan-out is tested with real sessions and no editor.
import { groupInbox } from '../../core/inbox';
import type { SessionSnapshot } from '../../core/sessionSnapshot';

/** The `when` clauses of package.json read these. */
export const CONTEXT_KEYS = [
  'ultraplan.hasSessions',
  'ultraplan.hasActiveSessions',
  'ultraplan.hasHistory',
  'ultraplan.hasPendingPlan',
] as const;
export type ContextKey = (typeof CONTEXT_KEYS)[number];

/** What the inbox redraws: every row (the list or its grouping changed), or only these sessions' rows. */
export type InboxChange = { all: true } | { all: false; keys: readonly string[] };

export interface SurfaceChange {
  /** The sessions the status bar shows, when anything it shows of them changed; undefined: leave it. */
  readonly status: readonly SessionSnapshot[] | undefined;
  /** The context keys whose value changed, with their new value. */
  readonly context: ReadonlyArray<readonly [ContextKey, boolean]>;
  readonly inbox: InboxChange;
}

export class ChangedSurfaces {
  #status: readonly SessionSnapshot[] | undefined;
  readonly #context = new Map<ContextKey, boolean>();
  /** Each session's snapshot as its inbox row last showed it. */
  #rows = new Map<string, SessionSnapshot>();
  #layout: string | undefined;

  /** What changed since the last call, for the sessions' latest snapshots (in the list's order). */
  next(snapshots: readonly SessionSnapshot[]): SurfaceChange {
    return { status: this.#nextStatus(snapshots), context: this.#nextContext(snapshots), inbox: this.#nextInbox(snapshots) };
  }

  #nextStatus(snapshots: readonly SessionSnapshot[]): readonly SessionSnapshot[] | undefined {
    const live = snapshots.filter((s) => s.state.ended === undefined);
    // With nothing in flight, the latest finished session stays visible (approved, teleported, failed).
    const latestFinished = snapshots
      .filter((s) => s.state.ended !== undefined)
      .sort((a, b) => b.state.attentionChangedAt - a.state.attentionChangedAt)[0];
    const shown = live.length > 0 ? live : latestFinished ? [latestFinished] : [];
    const before = this.#status;
    this.#status = shown;
    if (before && before.length === shown.length && before.every((b, i) => sameForStatus(b, shown[i]!))) return undefined;
    return shown;
  }

  #nextContext(snapshots: readonly SessionSnapshot[]): Array<readonly [ContextKey, boolean]> {
    const live = snapshots.filter((s) => s.state.ended === undefined);
    const values: Record<ContextKey, boolean> = {
      'ultraplan.hasSessions': snapshots.length > 0,
      'ultraplan.hasActiveSessions': live.length > 0,
      'ultraplan.hasHistory': live.length < snapshots.length,
      'ultraplan.hasPendingPlan': live.some((s) => s.state.canDecide),
    };
    const changed: Array<readonly [ContextKey, boolean]> = [];
    for (const key of CONTEXT_KEYS) {
      if (this.#context.get(key) === values[key]) continue;
      this.#context.set(key, values[key]);
      changed.push([key, values[key]]);
    }
    return changed;
  }

  #nextInbox(snapshots: readonly SessionSnapshot[]): InboxChange {
    // The tree's shape: its groups, their order and the rows in each (so also the badge's count).
    const layout = groupInbox(snapshots.map((s) => s.inbox))
      .map((g) => `${g.id}:${g.entries.map((e) => e.key).join(',')}`)
      .join('|');
    const before = this.#rows;
    this.#rows = new Map(snapshots.map((s) => [s.identity.key, s]));
    if (layout !== this.#layout) {
      this.#layout = layout;
      return { all: true };
    }
    const keys = snapshots.filter((s) => !sameForInbox(before.get(s.identity.key), s)).map((s) => s.identity.key);
    return { all: false, keys };
  }
}

/** Everything the status bar reads of a session: its inbox entry (title, attention, revisions, mode), phase and permission count. */
function sameForStatus(a: SessionSnapshot, b: SessionSnapshot): boolean {
  return (
    a.identity === b.identity &&
    a.inbox === b.inbox &&
    a.state.phase === b.state.phase &&
    a.state.permissions.length === b.state.permissions.length
  );
}

/** Everything an inbox row reads: its entry, its revisions (the tooltip's decisions) and its saved plans (its children). */
function sameForInbox(a: SessionSnapshot | undefined, b: SessionSnapshot): boolean {
  return a !== undefined && a.inbox === b.inbox && a.revisions === b.revisions && a.state.savedPlans === b.state.savedPlans;
}
