// One session a worker claimed: its agent, run by the agent runtime the single-process host uses
// too (runtime/agentRuntime.ts), over the session's log as the worker holds it (workerLog.ts: read
// from the database, written under the lease). What is the worker's own: preparing the session's
// workspace before an agent can be made, stopping when the session is archived or the lease is
// lost, and letting go of the lease on a clean stop. When another worker stopped mid-turn, the
// runtime resumes the agent or says it stopped (agentRestarts.ts). docs/server.md, "Workers".
import type { AgentFactory } from '../../agents/agent';
import { AgentRuntime } from '../runtime/agentRuntime';
import type { ClaimedSession, Lease, SessionLeases } from '../store/postgres/leases';
import { changesSinceApproval, recordApproval } from '../changes/approvalSnapshot';
import { WorkerLog } from './workerLog';
import { errorMessage } from '../../core/errors';

/** A session's agent factory and the folder its agents work in. */
export interface PreparedAgent {
  factory: AgentFactory;
  workspace: string;
}

/** Said to the person (agent_lost, agent resumed) when a worker took a session over. */
const INTERRUPTION = 'The worker running this session stopped';

export class WorkerSession {
  private readonly store: WorkerLog;
  private readonly runtime: AgentRuntime;
  private stopped = false;
  /** Where the agent works, once prepared. */
  private workspace: string | undefined;
  /** The diff being taken and stored, so turns that end close together store in order. */
  private storingChanges: Promise<void> = Promise.resolve();

  constructor(
    private readonly claimed: ClaimedSession,
    private readonly leases: SessionLeases,
    /** The agent factory for this session's workspace, prepared from its source; throws a reason for the person. */
    private readonly prepare: (session: ClaimedSession) => Promise<PreparedAgent>,
    private readonly log: (line: string) => void,
    private readonly onStopped: () => void,
  ) {
    this.store = new WorkerLog(claimed, leases, log, () => void this.stop(false));
    this.runtime = new AgentRuntime({
      meta: claimed.meta,
      store: this.store,
      agentFactory: () => this.agentFactory(),
      cursor: claimed.agentCursor,
      log,
      interruption: INTERRUPTION,
      approvals: {
        approved: () => this.recordApproval(),
        turnEnded: () => this.storeChanges(),
      },
    });
  }

  /** The workspace as it is when the plan is approved, in its own repository (approvalSnapshot.ts). */
  private async recordApproval(): Promise<void> {
    if (this.workspace === undefined) return;
    const record = await recordApproval(this.workspace, this.claimed.sessionId);
    this.log(
      `session ${this.claimed.sessionId}: ${record.kind === 'recorded' ? `the workspace at approval is recorded (${record.commit.slice(0, 12)})` : `the workspace at approval is not recorded: ${record.reason}`}`,
    );
  }

  /**
   * The diff since approval, stored for the API (which cannot read this checkout) each time a
   * turn after the approval ends: docs/execution.md, "What changed".
   */
  private storeChanges(): void {
    const workspace = this.workspace;
    if (workspace === undefined) return;
    this.storingChanges = this.storingChanges.then(async () => {
      if (this.stopped) return;
      try {
        const outcome = await changesSinceApproval(workspace, this.claimed.sessionId);
        if (!(await this.leases.storeChanges(this.lease, outcome))) return;
        this.log(
          `session ${this.claimed.sessionId}: changes since approval stored (${outcome.kind === 'changes' ? `${outcome.changes.files.length} files` : outcome.reason})`,
        );
      } catch (err) {
        this.log(`session ${this.claimed.sessionId}: storing the changes since approval failed (${errorMessage(err)})`);
      }
    });
  }

  get lease(): Lease {
    return this.store.lease;
  }

  /** Starts the agent of a new session, or resumes (or reports stopped) the one a lost worker ran. */
  async begin(): Promise<void> {
    const resuming = this.claimed.agentCursor > 0 || this.claimed.checkpoint !== undefined;
    await this.runtime.begin();
    const agent = this.runtime.agent;
    if (resuming && agent) this.log(`session ${this.claimed.sessionId}: agent resumed on another worker (${agent.label})`);
  }

  /** Hands the agent what clients sent since it was last given something; stops on archive. */
  async catchUp(): Promise<void> {
    if (this.stopped) return;
    try {
      if ((await this.leases.status(this.claimed.sessionId)) === 'archived') return await this.stop(false);
      await this.runtime.feed();
    } catch (err) {
      this.log(`session ${this.claimed.sessionId}: reading client events failed (${errorMessage(err)})`);
    }
  }

  /** Stops the agent; `release`: a clean stop lets go of the lease so another worker claims it now. */
  async stop(release: boolean): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.store.stopping = true;
    await this.runtime.stop();
    await this.store.flushed();
    if (release) await this.leases.release(this.lease).catch(() => {});
    this.onStopped();
  }

  /** The factory for the session's workspace; when it cannot be prepared, the session says why and nothing runs. */
  private async agentFactory(): Promise<AgentFactory | undefined> {
    try {
      const prepared = await this.prepare(this.claimed);
      this.workspace = prepared.workspace;
      return prepared.factory;
    } catch (err) {
      const reason = errorMessage(err);
      this.log(`session ${this.claimed.sessionId}: workspace not prepared: ${reason}`);
      void this.store.write([
        {
          t: 'event',
          origin: 'host',
          event: {
            type: 'system',
            subtype: 'agent_error',
            message: `The worker could not prepare this session's workspace: ${reason}. Send a message to try again.`,
          },
        },
        {
          t: 'event',
          origin: 'host',
          event: { type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, errors: [reason] },
        },
        { t: 'status', status: 'idle' },
        // Nothing to resume: the next message starts a fresh turn with the conversation so far.
        { t: 'checkpoint', state: null },
      ]);
      return undefined;
    }
  }
}
