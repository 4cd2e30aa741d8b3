// The parts of one ACP agent, each built with exactly what its own host interface names: the
// handshake, the planning guard, the turn queue, the pending reviews, the plan texts, the review
// decisions, the agent's requests and the routing of session updates. A part reaches another only
// through a member of its interface, wired here; the agent's own state and acts come from the owner.
import type { InitializeResponse, StopReason } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { OutsideAccess } from '../../core/agentSettings';
import type { AnyEvent, SessionStatus } from '../../core/protocol';
import type { AgentQuirks } from '../quirks/agentQuirks';
import type { AgentFileAccess } from './agentFileAccess';
import { AgentRequests } from './agentRequests';
import { AcpEventTranslator } from './eventTranslator';
import type { HandshakeHost } from './handshake';
import { PendingReviews } from './pendingReviews';
import { PlanningGuard } from './planningGuard';
import type { AfterApproval } from './planReview';
import { PlanTexts } from './planText';
import { ReviewDecisions } from './reviewDecisions';
import type { AcpSessionChannel } from './sessionChannel';
import type { SessionUpdatesHost } from './sessionUpdates';
import { TurnQueue } from './turnQueue';

/** What the agent that owns the parts gives them: its settings, its state as it stands when read, and its acts. */
export interface PartsOwner {
  readonly label: string;
  readonly workspace: string;
  readonly home: string;
  readonly files: AgentFileAccess;
  /** The bound on each handshake step, and on a prompt's first event. */
  readonly handshakeTimeoutMs: number;
  readonly firstEventTimeoutMs: number;
  readonly afterApproval: AfterApproval;
  readonly outsideAccess: OutsideAccess;
  readonly env: Record<string, string | undefined>;
  readonly quirks: AgentQuirks;
  readonly session: AcpSessionChannel | undefined;
  /** Neither ended nor stopping. */
  readonly live: boolean;
  /** Failed or finished. */
  readonly ended: boolean;
  /** It plans in a sandbox whose workspace is read-only. */
  readonly plansReadOnly: boolean;
  readonly carryOutElsewhere: (plan: string) => void;
  readonly introduced: (agentInfo: InitializeResponse['agentInfo'], quirks: AgentQuirks, loadable: boolean) => void;
  readonly sessionCreated: (session: AcpSessionChannel) => void;
  readonly replaying: (on: boolean) => void;
  readonly turnEnded: (stopReason: StopReason) => void;
  readonly promptFailed: (error: unknown) => void;
  readonly setStatus: (status: Exclude<SessionStatus, 'archived'>) => void;
  readonly emit: (event: AnyEvent) => void;
  readonly report: (subtype: string, message: string, extra: Record<string, unknown>) => void;
  readonly log: (line: string) => void;
  /** Ends the session with `message`. */
  readonly fail: (message: string) => void;
}

export interface AcpParts {
  readonly translator: AcpEventTranslator;
  readonly guard: PlanningGuard;
  readonly turns: TurnQueue;
  readonly reviews: PendingReviews;
  readonly decisions: ReviewDecisions;
  readonly requests: AgentRequests;
  readonly handshake: HandshakeHost;
  readonly updates: SessionUpdatesHost;
}

export function buildAcpParts(owner: PartsOwner): AcpParts {
  const { label, workspace, home, files, afterApproval, emit, report, log } = owner;
  const translator = new AcpEventTranslator(emit);
  const guard = new PlanningGuard({
    label,
    emit,
    report,
    log,
    enterPlanMode: async (target) => {
      await owner.session?.enterPlanMode(target);
    },
  });
  const turns = new TurnQueue(
    {
      label,
      get live() {
        return owner.live;
      },
      get session() {
        return owner.session;
      },
      turnStarted: () => {
        guard.turnStarted();
        owner.setStatus('running');
      },
      turnEnded: owner.turnEnded,
      promptFailed: owner.promptFailed,
      silent: owner.fail,
      log,
    },
    owner.firstEventTimeoutMs,
  );
  const reviews = new PendingReviews({ emit, setStatus: owner.setStatus, planOffered: () => guard.planOffered(), log });
  const planTexts = new PlanTexts({
    label,
    workspace,
    files,
    translator,
    get quirks() {
      return owner.quirks;
    },
    get live() {
      return owner.live;
    },
    log,
  });
  const decisions = new ReviewDecisions({
    label,
    workspace,
    afterApproval,
    get quirks() {
      return owner.quirks;
    },
    guard,
    translator,
    turns,
    reviews,
    get session() {
      return owner.session;
    },
    get ended() {
      return owner.ended;
    },
    get plansReadOnly() {
      return owner.plansReadOnly;
    },
    carryOutElsewhere: owner.carryOutElsewhere,
    log,
    report,
    fail: owner.fail,
  });
  const requests = new AgentRequests({
    label,
    workspace,
    home,
    outsideAccess: owner.outsideAccess,
    afterApproval,
    files,
    translator,
    get quirks() {
      return owner.quirks;
    },
    guard,
    reviews,
    planTexts,
    turns,
    get live() {
      return owner.live;
    },
    setStatus: owner.setStatus,
    log,
    report,
  });
  const handshake: HandshakeHost = {
    label,
    workspace,
    get env() {
      return owner.env;
    },
    boundMs: owner.handshakeTimeoutMs,
    afterApproval,
    guard,
    log,
    introduced: owner.introduced,
    sessionCreated: owner.sessionCreated,
    replaying: owner.replaying,
  };
  const updates: SessionUpdatesHost = {
    turns,
    guard,
    translator,
    planTexts,
    decisions,
    get quirks() {
      return owner.quirks;
    },
    notice: (text) => report('acp_agent_notice', `${label}: ${text}`, {}),
    log,
  };
  return { translator, guard, turns, reviews, decisions, requests, handshake, updates };
}
