// The agent runtime (src/service/runtime/agentRuntime.ts) over both stores, by one contract:
// a client event is given to the agent exactly once across a restart, whether the process died
// before the cursor that says it was given reached the store, or after. The restart is simulated
// in process: the old runtime's writes stop reaching the store (as a killed process's would), and
// a new runtime opens the session from what the store holds. Real journal files, real PostgreSQL.
import * as assert from 'node:assert/strict';
import type { Agent, AgentContext, AgentFactory } from '../../../src/agents/agent';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { HostedSession } from '../../../src/service/host/hostedSession';
import { AgentRuntime } from '../../../src/service/runtime/agentRuntime';
import type { RuntimeRecord, RuntimeStore } from '../../../src/service/runtime/runtimeStore';
import { FileSessionStore, type StoredEvent } from '../../../src/service/store/sessionStore';
import { SessionLeases } from '../../../src/service/store/postgres/leases';
import { PostgresServerStore } from '../../../src/service/store/postgres/postgresStore';
import { WorkerLog } from '../../../src/service/workers/workerLog';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { tempDir } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';

/** One session in a store, as a process opening it after a restart finds it. */
interface DurableSession {
  /** The runtime's store and cursor, read from what is stored. */
  open(): Promise<{ store: RuntimeStore; cursor: number }>;
  /** A client sends a message (stored as the store's append stores it). */
  send(text: string): Promise<void>;
  /** The session's log as stored. */
  events(): Promise<StoredEvent[]>;
  /** The agent's checkpoint as stored. */
  checkpoint(): Promise<unknown>;
  close(): Promise<void>;
}

type OpenSession = (prompt: string) => Promise<DurableSession>;

const journal: OpenSession = async (prompt) => {
  const files = new FileSessionStore(tempDir('ultraplan-runtime-'), { fsync: false });
  const meta = {
    id: 'session_runtime',
    title: 'Runtime',
    created_at: new Date().toISOString(),
    environment_id: null,
    session_context: null,
  };
  await files.create(meta);
  let current = new HostedSession(meta, 'running', files, () => {});
  const stamp = (event: Record<string, unknown> & { type: string }) => ({ t: 'event' as const, event: current.stamp(event) });
  // As the host creates a session: its events, and the cursor before them.
  await current.queue([stamp(setPlanModeEvent('plan_mode')), stamp(userMessageEvent(prompt)), { t: 'delivered', seq: 0 }]);
  const reload = async () => {
    const [loaded] = await files.load();
    return HostedSession.load(loaded as NonNullable<typeof loaded>, files, () => {});
  };
  return {
    async open() {
      const { session, cursor } = await reload();
      current = session;
      return { store: session, cursor };
    },
    send: (text) => current.queue([stamp(userMessageEvent(text))]),
    events: async () => (await reload()).session.events,
    checkpoint: async () => (await reload()).session.checkpoint,
    close: async () => {},
  };
};

const postgres: OpenSession = async (prompt) => {
  const cluster = await sharedPostgresCluster();
  const store = await PostgresServerStore.open({ connectionString: await cluster.createDatabase() });
  const session = await store.createSession({
    title: 'Runtime',
    events: [
      { type: 'event', data: setPlanModeEvent('plan_mode') },
      { type: 'event', data: userMessageEvent(prompt) },
    ],
  });
  // A short lease: after a "crash" the next worker claims the session once it ran out.
  const leases = new SessionLeases(store.pool, 'runtime-test', 200, () => {});
  return {
    async open() {
      const claimed = await waitFor(() => leases.claim(), { message: 'a claim', timeoutMs: 10_000, until: (c) => c !== undefined });
      if (!claimed) throw new Error('unreachable');
      return {
        store: new WorkerLog(
          claimed,
          leases,
          () => {},
          () => {},
        ),
        cursor: claimed.agentCursor,
      };
    },
    send: async (text) => void (await store.appendEvents(session.id, [userMessageEvent(text)])),
    events: async () => (await store.readEvents(session.id, null, 1000)).data,
    async checkpoint() {
      const { rows } = await store.pool.query<{ checkpoint: string | null }>('SELECT checkpoint FROM sessions WHERE id = $1', [session.id]);
      return rows[0]?.checkpoint ? (JSON.parse(rows[0].checkpoint) as unknown) : undefined;
    },
    close: () => store.close(),
  };
};

/** A store whose writes stop reaching it once the process "died". */
class Killable implements RuntimeStore {
  dead = false;
  constructor(private readonly inner: RuntimeStore) {}
  get events() {
    return this.inner.events;
  }
  get checkpoint() {
    return this.inner.checkpoint;
  }
  get outstanding() {
    return this.inner.outstanding;
  }
  get answered() {
    return this.inner.answered;
  }
  load(): Promise<void> {
    return this.inner.load?.() ?? Promise.resolve();
  }
  write(records: readonly RuntimeRecord[]): Promise<void> {
    return this.dead ? Promise.resolve() : this.inner.write(records);
  }
  clientEventsAfter(seq: number): Promise<readonly StoredEvent[]> {
    return this.inner.clientEventsAfter(seq);
  }
}

/** Remembers every message it was given, in its checkpoint too (written as it takes each one). */
class RememberingAgent implements Agent {
  readonly label = 'remembering agent';
  heard: string[] = [];
  private ctx: AgentContext | undefined;
  async start(ctx: AgentContext, prompt: string): Promise<void> {
    this.ctx = ctx;
    this.take(prompt);
  }
  async resume(ctx: AgentContext, checkpoint: unknown): Promise<'continued'> {
    this.ctx = ctx;
    this.heard = [...(checkpoint as { heard: string[] }).heard];
    return 'continued';
  }
  onUserMessage(text: string): void {
    this.take(text);
  }
  onDecision(): void {}
  async stop(): Promise<void> {}
  private take(text: string): void {
    this.heard.push(text);
    this.ctx?.checkpoint?.({ heard: this.heard });
  }
}

async function run(session: DurableSession): Promise<{ runtime: AgentRuntime; store: Killable; agents: RememberingAgent[] }> {
  const opened = await session.open();
  const store = new Killable(opened.store);
  const agents: RememberingAgent[] = [];
  const factory: AgentFactory = () => {
    const agent = new RememberingAgent();
    agents.push(agent);
    return agent;
  };
  const runtime = new AgentRuntime({
    meta: { id: 'x', title: 'Runtime' },
    store,
    agentFactory: async () => factory,
    cursor: opened.cursor,
    log: () => {},
  });
  await runtime.begin();
  return { runtime, store, agents };
}

/** Waits until what was written is stored: the last checkpoint holds `heard`. */
async function checkpointed(session: DurableSession, heard: string[]): Promise<void> {
  await waitFor(async () => JSON.stringify(await session.checkpoint()), {
    message: `a checkpoint of ${heard.join(', ')}`,
    timeoutMs: 10_000,
    until: (cp) => cp === JSON.stringify({ heard }),
  });
}

for (const [name, open] of [
  ['journal', journal],
  ['postgres', postgres],
] as const) {
  describe(`AgentRuntime exactly once: ${name}`, function () {
    this.timeout(60_000);
    let session: DurableSession;
    beforeEach(async () => {
      session = await open('Plan the change');
    });
    afterEach(() => session.close());

    it('starts a new session with its prompt and records the cursor past the creation', async () => {
      const { agents, runtime } = await run(session);
      assert.deepEqual(
        agents.map((a) => a.heard),
        [['Plan the change']],
      );
      await checkpointed(session, ['Plan the change']);
      const { cursor } = await session.open();
      assert.equal(cursor, runtime.cursor);
      assert.ok(cursor >= 2, `the cursor is past both creation events, got ${cursor}`);
      await runtime.stop();
    });

    it('killed before the cursor reached the store: the message is given again after the restart, once', async () => {
      const first = await run(session);
      await checkpointed(session, ['Plan the change']);
      await session.send('Also update the docs');
      first.store.dead = true; // the process dies: neither the cursor nor the agent's checkpoint is stored
      await first.runtime.feed();
      assert.deepEqual(first.agents[0]?.heard, ['Plan the change', 'Also update the docs'], 'the dying agent had it');
      await first.runtime.stop();

      const second = await run(session);
      assert.deepEqual(
        second.agents.map((a) => a.heard),
        [['Plan the change', 'Also update the docs']],
      );
      await checkpointed(session, ['Plan the change', 'Also update the docs']);
      await second.runtime.stop();
    });

    it('killed after the cursor reached the store: the message is not given again', async () => {
      const first = await run(session);
      await session.send('Also update the docs');
      await first.runtime.feed();
      await checkpointed(session, ['Plan the change', 'Also update the docs']);
      first.store.dead = true;
      await first.runtime.stop();

      const second = await run(session);
      await second.runtime.feed();
      assert.deepEqual(
        second.agents.map((a) => a.heard),
        [['Plan the change', 'Also update the docs']],
      );
      const said = (await session.events()).filter((e) => e.type === 'user').length;
      assert.equal(said, 2, 'the log holds the prompt and the message once each');
      await second.runtime.stop();
    });

    it('feeds concurrent arrivals once each, in order', async () => {
      const { runtime, agents } = await run(session);
      await Promise.all(['one', 'two', 'three'].map((text) => session.send(text).then(() => runtime.feed())));
      await runtime.feed();
      assert.deepEqual(agents[0]?.heard.slice(1).sort(), ['one', 'three', 'two']);
      assert.equal(agents[0]?.heard.length, 4);
      await runtime.stop();
    });
  });
}
