// The one Phase of a followed session, how it is derived from what the session said and what this
// host did, and how each surface words it. Pure.
import * as z from 'zod';
import type { PollPhase } from './poller';

export const PHASES = [
  'starting',
  'planning',
  'needs_input',
  'plan_ready',
  // An edit or command the agent waits on; outranks the session's own phase where attention is shown.
  'needs_permission',
  // The agent's process is gone (its host restarted) and nothing runs it: what it left (a plan, a
  // question) can still be answered, and each answer starts a fresh agent turn.
  'agent_stopped',
  'approved',
  'executing',
  'teleported',
  'rejected',
  'failed',
  'stopped',
  'completed',
] as const;
export const PhaseSchema = z.enum(PHASES);
export type Phase = z.infer<typeof PhaseSchema>;

/** How following a session ended, when it has. */
export type EndedBy = 'teleport' | 'teleported_elsewhere' | 'stop' | 'failed' | 'completed' | 'execution_failed';

const ENDED_PHASE: Record<EndedBy, Phase> = {
  teleport: 'teleported',
  teleported_elsewhere: 'teleported',
  stop: 'stopped',
  failed: 'failed',
  completed: 'completed',
  execution_failed: 'failed',
};

/** The phase a finished session was persisted with, read back as how it ended. */
export function endedByFromPhase(phase: Phase): EndedBy {
  switch (phase) {
    case 'teleported':
      return 'teleport';
    case 'stopped':
      return 'stop';
    case 'completed':
      return 'completed';
    default:
      return 'failed';
  }
}

/** What the phase is derived from; every field is a fact the session model holds. */
export interface PhaseFacts {
  ended: EndedBy | undefined;
  /** The session's own events decided the plan (approved: the remote executes; teleport: here). */
  decided: 'approved' | 'teleport' | null;
  /** What this host sent for the plan that is still pending, until the session's events show it. */
  localDecision: 'approved' | 'rejected' | undefined;
  /** The last poll's reading; undefined before the first poll. */
  poll: PollPhase | undefined;
  /** A reply went out since the agent last asked: the quiet that follows is the agent working. */
  replied: boolean;
  /** The session's log says its agent stopped, and nothing since says one runs again. */
  agentStopped: boolean;
  openPermissions: number;
  /** Before the first poll: planning for a new session, the persisted phase for a restored one. */
  initial: Phase;
}

export function derivePhase(f: PhaseFacts): Phase {
  if (f.ended !== undefined) return ENDED_PHASE[f.ended];
  // What this host just sent starts a fresh agent turn: shown as sent until the log says more.
  if (f.agentStopped && f.localDecision === undefined && !f.replied) return 'agent_stopped';
  if (f.decided === 'approved') return 'executing';
  if (f.decided === 'teleport') return 'teleported';
  if (f.poll === undefined) return f.initial;
  // A plan this host decided stays "approved"/"rejected" until the agent's tool_result lands: the
  // session may still show it pending for a poll or two.
  if (f.poll === 'plan_ready') return f.localDecision ?? 'plan_ready';
  // Waiting on a permission answer is not a question: the prompt and the status bar ask for it.
  if (f.poll === 'needs_input') return f.openPermissions > 0 || f.replied ? 'planning' : 'needs_input';
  return 'planning';
}

/** Where the person's attention goes (the status bar): an open permission request outranks the phase. */
export function attentionPhase(phase: Phase, openPermissions: number, finished: boolean): Phase {
  return openPermissions > 0 && !finished ? 'needs_permission' : phase;
}

/** One table per surface that shows a phase. */
export const PHASE_LABELS: { statusBar: Record<Phase, string>; panel: Record<Phase, string>; words: Record<Phase, string> } = {
  statusBar: {
    starting: '$(sync~spin) Ultraplan: starting',
    planning: '$(sync~spin) Ultraplan: planning',
    // After a rejection the agent is revising: to the person that is planning again.
    rejected: '$(sync~spin) Ultraplan: planning',
    needs_input: '$(question) Ultraplan: needs input',
    plan_ready: '$(checklist) Ultraplan: plan ready',
    needs_permission: '$(shield) Ultraplan: needs permission',
    agent_stopped: '$(debug-disconnect) Ultraplan: agent stopped',
    approved: '$(check) Ultraplan: approved',
    executing: '$(sync~spin) Ultraplan: executing',
    teleported: '$(arrow-circle-down) Ultraplan: teleported',
    failed: '$(error) Ultraplan: failed',
    stopped: '$(circle-slash) Ultraplan: stopped',
    // The approved plan ran to its end on the remote.
    completed: '$(pass) Ultraplan: approved · completed',
  },
  panel: {
    starting: 'Starting',
    planning: 'Planning',
    needs_input: 'Needs input',
    plan_ready: 'Plan ready',
    needs_permission: 'Needs permission',
    agent_stopped: 'Agent stopped',
    approved: 'Approved',
    // Where it executes is the backend's to say (the header names it): on this machine, a server or the web.
    executing: 'Executing',
    teleported: 'Teleported',
    rejected: 'Rejected, revising',
    failed: 'Failed',
    stopped: 'Stopped',
    completed: 'Completed',
  },
  /** Plain words, for pickers, tooltips and logs. */
  words: {
    starting: 'starting',
    planning: 'planning',
    needs_input: 'needs input',
    plan_ready: 'plan ready',
    needs_permission: 'needs permission',
    agent_stopped: 'agent stopped',
    approved: 'approved',
    executing: 'executing',
    teleported: 'teleported',
    rejected: 'rejected',
    failed: 'failed',
    stopped: 'stopped',
    completed: 'completed',
  },
};
