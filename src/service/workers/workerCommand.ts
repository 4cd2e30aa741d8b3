// `ultraplan-server worker --store postgres://… --agent KIND:ARG`: the command line of a worker
// (worker.ts). Its workspace for each session comes from the session's source: a git repository
// (`session_context.sources[]` of type git_repository, with `url` and an optional `revision`) is
// cloned into a scratch folder of its own; a session without one works in --workspace (one
// machine, a local path).
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PreparedAgent } from './workerSession';
import { createAgentFactory } from '../../agents/agentSpec';
import { agentFlag, databaseUrlFlag, integerFlag, parseFlags, Shutdown, UsageError } from '../commandLine';
import type { ClaimedSession } from '../store/postgres/leases';
import { DEFAULT_LEASE_MS, defaultSlotsPerUser, SessionWorker } from './worker';
import { LIVENESS_PATH, ProbeListener, ProbeResponder, READINESS_PATH } from '../http/health';
import { prepareWorkspace } from './workspaceSource';
import { SANDBOX_HELP, sandboxSettings } from '../sandboxFlag';
import { HELD_KEY_HELP, heldKeysFlag } from '../heldKeysFlag';

const COMMAND = 'ultraplan-server worker';

export const WORKER_HELP = `Usage: ultraplan-server worker --store postgres://… --agent KIND:ARG [options]

Runs the agents of the sessions stored in PostgreSQL (the API servers run none).

Options:
  --store URL          the database, without a password (postgres://user@host:port/db)
  --database-url-file FILE
                       the database URL with its password, from FILE (a mounted Secret,
                       mode 0400) or a pipe (/dev/stdin)
  --agent KIND:ARG     the agent each session runs (as for the server)
${HELD_KEY_HELP}  --workspace DIR      where a session without a git source works (default: the current directory)
  --scratch DIR        where git sources are cloned (default: a folder under the system temp)
  --git-host HOST      a host (or host:port) git sources may be fetched from, over https or
                       ssh; repeatable; * for any (default: none, so sessions need no source)
  --allow-file-sources let sessions clone file:// paths this worker can read: one person's
                       server only
  --sandbox-root DIR   where each session's sandbox HOME and temp folder go (default: under --scratch)
${SANDBOX_HELP}  --lease-ms N         how long a claim holds without a heartbeat (default ${DEFAULT_LEASE_MS})
  --max-sessions N     sessions run at once (default 20)
  --max-worker-slots-per-user N
                       sessions of one user (OIDC) all workers together run at once; the
                       rest wait, and each claim goes to the user served longest ago
                       (default: half of --max-sessions, rounded up)
  --retain-archived-days N
                       delete the folders a session left on this worker (its clone under
                       --scratch, its sandbox HOME and temp folder) N days after it was archived,
                       or once the database no longer holds it (default: kept for good; set it
                       as the API replicas' --retain-archived-days)
  --worker-id ID       this worker's name in the database and the log
  --health-port PORT   answer probes on this port: GET /healthz (the process serves) and
                       /readyz (the database answers and holds the schema); no token, no data
  --health-host HOST   address the probes listen on (default 127.0.0.1; 0.0.0.0 in a pod)
  -h, --help           show this text
`;

export async function runWorkerCommand(argv: string[], log: (line: string) => void): Promise<void> {
  const values = parseFlags(COMMAND, argv, {
    store: { type: 'string' },
    'database-url-file': { type: 'string' },
    sandbox: { type: 'string' },
    'sandbox-share': { type: 'string', multiple: true },
    'sandbox-home': { type: 'string' },
    'sandbox-bwrap': { type: 'string' },
    'sandbox-root': { type: 'string' },
    agent: { type: 'string' },
    'agent-key-file': { type: 'string', multiple: true },
    workspace: { type: 'string' },
    scratch: { type: 'string' },
    'lease-ms': { type: 'string' },
    'max-sessions': { type: 'string' },
    'max-worker-slots-per-user': { type: 'string' },
    'worker-id': { type: 'string' },
    'retain-archived-days': { type: 'string' },
    'health-port': { type: 'string' },
    'health-host': { type: 'string', default: '127.0.0.1' },
    'git-host': { type: 'string', multiple: true },
    'allow-file-sources': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    process.stdout.write(WORKER_HELP);
    return;
  }
  const url = await databaseUrlFlag(COMMAND, { store: values.store, file: values['database-url-file'] }, log);
  if (!url) throw new UsageError(COMMAND, '--database-url-file FILE (or --store postgres://… without a password) is required');
  if (!values.agent) throw new UsageError(COMMAND, '--agent KIND:ARG is required');
  const agentSpec = values.agent;
  const workspace = path.resolve(values.workspace ?? '.');
  const scratch = values.scratch ? path.resolve(values.scratch) : await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-worker-'));
  const leaseMs = integerFlag(COMMAND, 'lease-ms', values['lease-ms'], DEFAULT_LEASE_MS);
  const maxSessions = integerFlag(COMMAND, 'max-sessions', values['max-sessions'], 20);
  const maxSlotsPerUser = integerFlag(
    COMMAND,
    'max-worker-slots-per-user',
    values['max-worker-slots-per-user'],
    defaultSlotsPerUser(maxSessions),
  );
  const healthPort =
    values['health-port'] === undefined ? undefined : integerFlag(COMMAND, 'health-port', values['health-port'], 0, { min: 0, max: 65535 });
  const sources = { hosts: (values['git-host'] ?? []).map((host) => host.trim().toLowerCase()), allowFile: values['allow-file-sources'] };
  const retainDays = values['retain-archived-days'];
  const archivedDays = retainDays === undefined ? undefined : integerFlag(COMMAND, 'retain-archived-days', retainDays, 0, { min: 0 });
  const sandboxRoot = values['sandbox-root'] ? path.resolve(values['sandbox-root']) : path.join(scratch, 'sandboxes');
  // A worker runs several people's agents: each in a sandbox of its own, or the worker refuses to start.
  const sandboxed = sandboxSettings(
    COMMAND,
    {
      mode: values.sandbox,
      multiUser: true,
      root: sandboxRoot,
      shared: values['sandbox-share'],
      homeTemplate: values['sandbox-home'],
      bwrap: values['sandbox-bwrap'],
    },
    log,
  );
  const heldKeys = await heldKeysFlag(
    COMMAND,
    { entries: values['agent-key-file'], sandboxed: sandboxed !== undefined, env: process.env },
    log,
  );
  const sandbox = sandboxed && heldKeys.size > 0 ? { ...sandboxed, heldKeys } : sandboxed;
  // Checked once at start, so a wrong --agent is a usage error rather than a failure per session.
  await agentFlag(COMMAND, agentSpec, { log, workspace, ...(sandbox ? { sandbox } : {}) });

  const agentFor = async (session: ClaimedSession): Promise<PreparedAgent> => {
    const folder = await prepareWorkspace(session.meta, { workspace, scratch, log, sources });
    const { factory } = await createAgentFactory(agentSpec, { log, workspace: folder, ...(sandbox ? { sandbox } : {}) });
    return { factory, workspace: folder };
  };
  const worker = new SessionWorker({
    connectionString: url,
    agentFor,
    ...(values['worker-id'] ? { workerId: values['worker-id'] } : {}),
    leaseMs,
    maxSessions,
    maxSlotsPerUser,
    ...(archivedDays !== undefined ? { folderRetention: { parents: [scratch, sandboxRoot], archivedDays } } : {}),
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
  // Before the running line: whoever reads it as "ready" may signal at once, and must get a clean stop.
  new Shutdown(
    worker.id,
    async (signal) => {
      log(`${worker.id}: ${signal}: stopping agents and letting go of leases`);
      await worker.close();
      await probes?.close();
    },
    log,
  ).onSignals(true);
  process.stdout.write(`ultraplan-server worker ${worker.id} running\n`);
}
