// `ultraplan-server worker --store postgres://… --agent KIND:ARG`: the command line of a worker
// (worker.ts). Its workspace for each session comes from the session's source: a git repository
// (`session_context.sources[]` of type git_repository, with `url` and an optional `revision`) is
// cloned into a scratch folder of its own; a session without one works in --workspace (one
// machine, a local path).
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { AgentFactory } from '../agent';
import { createAgentFactory } from '../agentSpec';
import type { ClaimedSession } from '../store/postgres/leases';
import { DEFAULT_LEASE_MS, SessionWorker } from './worker';
import { prepareWorkspace } from './workspaceSource';

export class WorkerUsageError extends Error {}

export const WORKER_HELP = `Usage: ultraplan-server worker --store postgres://… --agent KIND:ARG [options]

Runs the agents of the sessions stored in PostgreSQL (the API servers run none).

Options:
  --store URL          the database (else ULTRAPLAN_DATABASE_URL)
  --agent KIND:ARG     the agent each session runs (as for the server)
  --workspace DIR      where a session without a git source works (default: the current directory)
  --scratch DIR        where git sources are cloned (default: a folder under the system temp)
  --lease-ms N         how long a claim holds without a heartbeat (default ${DEFAULT_LEASE_MS})
  --max-sessions N     sessions run at once (default 20)
  --worker-id ID       this worker's name in the database and the log
`;

export async function runWorkerCommand(argv: string[], log: (line: string) => void): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        store: { type: 'string' },
        agent: { type: 'string' },
        workspace: { type: 'string' },
        scratch: { type: 'string' },
        'lease-ms': { type: 'string' },
        'max-sessions': { type: 'string' },
        'worker-id': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    throw new WorkerUsageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    process.stdout.write(WORKER_HELP);
    return;
  }
  const url = values.store ?? (process.env.ULTRAPLAN_DATABASE_URL?.trim() || undefined);
  delete process.env.ULTRAPLAN_DATABASE_URL;
  if (!url || !/^postgres(ql)?:\/\//.test(url))
    throw new WorkerUsageError('worker: --store postgres://… (or ULTRAPLAN_DATABASE_URL) is required');
  if (!values.agent) throw new WorkerUsageError('worker: --agent KIND:ARG is required');
  const agentSpec = values.agent;
  const workspace = path.resolve(values.workspace ?? '.');
  const scratch = values.scratch ? path.resolve(values.scratch) : await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-worker-'));
  const number = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < 1)
      throw new WorkerUsageError(`worker: --${name} must be a positive integer, got ${JSON.stringify(value)}`);
    return Number(value);
  };
  // Checked once at start, so a wrong --agent is a usage error rather than a failure per session.
  await createAgentFactory(agentSpec, { log, workspace }).catch((err: unknown) => {
    throw new WorkerUsageError(`worker: --agent: ${err instanceof Error ? err.message : String(err)}`);
  });

  const agentFor = async (session: ClaimedSession): Promise<AgentFactory> => {
    const folder = await prepareWorkspace(session.meta, { workspace, scratch, log });
    return (await createAgentFactory(agentSpec, { log, workspace: folder })).factory;
  };
  const worker = new SessionWorker({
    connectionString: url,
    agentFor,
    ...(values['worker-id'] ? { workerId: values['worker-id'] } : {}),
    leaseMs: number('lease-ms', values['lease-ms'], DEFAULT_LEASE_MS),
    maxSessions: number('max-sessions', values['max-sessions'], 20),
    log,
  });
  await worker.start();
  process.stdout.write(`ultraplan-server worker ${worker.id} running\n`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log(`${worker.id}: ${signal}: stopping agents and letting go of leases`);
    worker.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
