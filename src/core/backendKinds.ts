// The kinds of backend, each described once: what it is called, what its setting says, where its
// sessions plan, when the extension archives them, how approval notes reach its agent and what it
// cannot do. The inbox, Choose Backend, Attach, the status bar and the settings' text read these;
// how the extension connects to each is its client (src/client, chosen in extension/backends).
// Pure: no I/O.

export const BACKEND_KINDS = ['embedded', 'server', 'claude-web', 'jules'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/**
 * When the extension archives a backend's sessions (docs/protocol.md section 9). A backend without one
 * leaves it to the extension's defaults.
 */
export interface BackendLifecycle {
  /** Approve hands the plan to the remote, which executes it: archiving would stop that. */
  readonly archiveOnApprove: boolean;
  readonly archiveOnTeleport: boolean;
  readonly archiveOnStop: boolean;
  readonly archiveOnFailure: boolean;
}

export interface BackendDescriptor {
  readonly kind: BackendKind;
  /** Its name for people: in labels, pickers and the session's tooltip. */
  readonly label: string;
  /** The `ultraplan.backend` setting's description of this value (package.json; checked by a test). */
  readonly settingDescription: string;
  /** Its line in Choose Backend (the embedded backend lists its agents instead). */
  readonly pickDetail?: string;
  /** The end of "an agent plans it in plan mode …": where its sessions plan. */
  where(place: { agent?: string; serverUrl?: string }): string;
  /** What the progress notification says while a new session is being made. */
  connecting(place: { serverUrl?: string }): string;
  /** When the extension archives its sessions; absent: the extension's defaults. */
  readonly lifecycle?: BackendLifecycle;
  /**
   * How Approve with Notes reaches its agent: the next user message after the approval, or (where
   * the remote agent reads nothing before it executes) as a section of the approved plan.
   */
  readonly notesDelivery: 'next_message' | 'plan_edit';
  /** Why a review's fleet of agents cannot run on it, or undefined when it can. */
  readonly noReviewFleet?: string;
  /** A link people can open for one of its sessions, where it has one. */
  sessionLink?(sessionId: string): string;
  /**
   * What a decision does here that it does not do elsewhere, said plainly where the person decides
   * (the review panel, docs): each entry one short sentence. Absent: every decision is as documented.
   */
  readonly limits?: BackendLimits;
}

/** Where a backend's decisions differ from the others', in words for the panel. */
export interface BackendLimits {
  /** What Reject (and line comments) does, when it is not a rejection the agent's protocol knows. */
  readonly reject?: string;
  /** Why an edited plan cannot be approved, when it cannot. */
  readonly approveEdited?: string;
  /** Why a plan cannot be taken home, when it cannot. */
  readonly teleport?: string;
}

/** Archived on failure, teleport and stop; never on approve, which leaves the agent carrying the plan out. */
const ARCHIVE_BUT_ON_APPROVE: BackendLifecycle = Object.freeze({
  archiveOnApprove: false,
  archiveOnTeleport: true,
  archiveOnStop: true,
  archiveOnFailure: true,
});

export const BACKENDS = {
  embedded: {
    kind: 'embedded',
    label: 'Embedded',
    settingDescription:
      "This user's local session service (started on demand, shared by the windows, outliving them), running the ACP agent chosen by `ultraplan.agent.choice` in the workspace folder. The scripted demo when chosen or when no agent is installed, labelled as a demo.",
    where: ({ agent }) => `the embedded backend${agent ? ` (${agent})` : ''}`,
    connecting: () => 'connecting to the local session service',
    // A failed session's agent may still run (a poll that timed out): archiving ends it.
    lifecycle: ARCHIVE_BUT_ON_APPROVE,
    notesDelivery: 'next_message',
  },
  server: {
    kind: 'server',
    label: 'Server',
    settingDescription: 'A self-hosted ultraplan-server at ultraplan.server.url; the token is set with "Ultraplan: Set Server Token…".',
    pickDetail: 'A self-hosted ultraplan-server; the token is kept in secret storage.',
    where: ({ serverUrl }) => (serverUrl ? `the server at ${serverUrl}` : 'the session server'),
    connecting: ({ serverUrl }) => `connecting to ${serverUrl ?? 'the session server'}`,
    notesDelivery: 'next_message',
  },
  'claude-web': {
    kind: 'claude-web',
    label: 'Claude Code on the web',
    settingDescription:
      'Claude Code on the web, with your Claude Code login (from `claude`): plans in a cloud session on this GitHub repository and opens a pull request when approved. Depends on a service whose API is not public; it may change without notice.',
    pickDetail: 'Your Claude Code login plans in a cloud session on this GitHub repository. Depends on a service whose API is not public.',
    where: () => 'Claude Code on the web, with your Claude Code login',
    connecting: () => 'connecting to Claude Code on the web',
    // Section 9: approve leaves the remote executing; teleport, stop and failure archive.
    lifecycle: ARCHIVE_BUT_ON_APPROVE,
    notesDelivery: 'plan_edit',
    noReviewFleet:
      "a review's agents run on the embedded backend or a session server; Claude Code on the web is not one. Use Claude Code's own review, or choose another backend.",
    sessionLink: (sessionId: string) => `https://claude.ai/code/${encodeURIComponent(sessionId)}`,
  },
  jules: {
    kind: 'jules',
    label: 'Jules',
    settingDescription:
      "Google's Jules with your API key: plans in the cloud on this GitHub repository. Its API has no reject: a rejection is sent as a message.",
    pickDetail: 'Plans in the cloud on this GitHub repository, with your API key.',
    where: () => 'Jules on this GitHub repository',
    connecting: () => 'connecting to Jules',
    // Its API has no archive or stop: the extension never tries.
    lifecycle: Object.freeze({ archiveOnApprove: false, archiveOnTeleport: false, archiveOnStop: false, archiveOnFailure: false }),
    notesDelivery: 'next_message',
    noReviewFleet: "a review's agents run on the embedded backend or a session server; Jules is neither.",
    sessionLink: (sessionId: string) => `https://jules.google.com/session/${encodeURIComponent(sessionId)}`,
    limits: {
      reject: 'Jules has no reject: your feedback and comments are sent to it as a message.',
      approveEdited: 'Jules approves only the plan it proposed.',
      teleport: "Jules's API cannot stop a session.",
    },
  },
} as const satisfies { readonly [K in BackendKind]: BackendDescriptor & { readonly kind: K } };

/** The descriptor of a kind. */
export function backendOf(kind: BackendKind): BackendDescriptor {
  return BACKENDS[kind];
}
