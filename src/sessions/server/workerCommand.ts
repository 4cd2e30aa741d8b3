// `ultraplan-server worker --store postgres://… --agent KIND:ARG`: the command line of a worker
// (worker.ts). Its workspace for each session comes from the session's source: a git repository
// (`session_context.sources[]` of type git_repository, with `url` and an optional `revision`) is
// cloned into a scratch folder of its own; a session without one works in --workspace (one
// machine, a local path).
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentFactory } from '../agent';
import { createAgentFactory } from '../agentSpec';
import { agentFlag, databaseUrlFlag, integerFlag, parseFlags, Shutdown, UsageError } from './commandLine';
import type { ClaimedSession } from '../store/postgres/leases';
import { DEFAULT_LEASE_MS, SessionWorker } from './worker';
import { LIVENESS_PATH, ProbeListener, ProbeResponder, READINESS_PATH } from './health';
import { prepareWorkspace } from './workspaceSource';

const COMMAND = 'ultraplan-server worker';

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
  --health-port PORT   answer probes on this port: GET /healthz (the process serves) and
                       /readyz (the database answers and holds the schema); no token, no data
  --health-host HOST   address the probes listen on (default 127.0.0.1; 0.0.0.0 in a pod)
  -h, --help           show this text
`;

export async function runWorkerCommand(argv: string[], log: (line: string) => void): Promise<void> {
  const values = parseFlags(COMMAND, argv, {
    store: { type: 'string' },
    agent: { type: 'string' },
    workspace: { type: 'string' },
    scratch: { type: 'string' },
    'lease-ms': { type: 'string' },
    'max-sessions': { type: 'string' },
    'worker-id': { type: 'string' },
    'health-port': { type: 'string' },
    'health-host': { type: 'string', default: '127.0.0.1' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    process.stdout.write(WORKER_HELP);
    return;
  }
  const url = databaseUrlFlag(COMMAND, values.store);
  if (!url) throw new UsageError(COMMAND, '--store postgres://… (or ULTRAPLAN_DATABASE_URL) is required');
  if (!values.agent) throw new UsageError(COMMAND, '--agent KIND:ARG is required');
  const agentSpec = values.agent;
  const workspace = path.resolve(values.workspace ?? '.');
  const scratch = values.scratch ? path.resolve(values.scratch) : await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-worker-'));
  const leaseMs = integerFlag(COMMAND, 'lease-ms', values['lease-ms'], DEFAULT_LEASE_MS);
  const maxSessions = integerFlag(COMMAND, 'max-sessions', values['max-sessions'], 20);
  const healthPort =
    values['health-port'] === undefined ? undefined : integerFlag(COMMAND, 'health-port', values['health-port'], 0, { min: 0, max: 65535 });
  // Checked once at start, so a wrong --agent is a usage error rather than a failure per session.
  await agentFlag(COMMAND, agentSpec, { log, workspace });

  const agentFor = async (session: ClaimedSession): Promise<AgentFactory> => {
    const folder = await prepareWorkspace(session.meta, { workspace, scratch, log });
    return (await createAgentFactory(agentSpec, { log, workspace: folder })).factory;
  };
  const worker = new SessionWorker({
    connectionString: url,
    agentFor,
    ...(values['worker-id'] ? { workerId: values['worker-id'] } : {}),
    leaseMs,
    maxSessions,
    log,
  });
  // Listening before the worker starts: liveness answers while it waits for the database.
  let probes: ProbeListener | undefined;
  if (healthPort !== undefined) {
    probes = new ProbeListener(new ProbeResponder((timeoutMs) => worker.checkReady(timeoutMs), log));
    const port = await probes.listen(healthPort, values['health-host']);
    log(`${worker.id}: probes on http://${values['health-host']}:${port}${LIVENESS_PATH} and ${READINESS_PATH}`);
  }
  await worker.start();
  process.stdout.write(`ultraplan-server worker ${worker.id} running\n`);
  new Shutdown(
    worker.id,
    async (signal) => {
      log(`${worker.id}: ${signal}: stopping agents and letting go of leases`);
      await worker.close();
      await probes?.close();
    },
    log,
  ).onSignals(true);
}
