#!/usr/bin/env node
// ultraplan-server: the self-hosted session server (built to dist/server.mjs).
// stdout carries exactly one line, the listening address, so scripts can wait for it; every
// other line (requests, warnings, errors) goes to stderr.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AGENT_KINDS } from '../agents/agentSpec';
import { DEFAULT_HOST_LIMITS, SessionHost, type SessionHostLimits } from './host/sessionHost';
import { DataDirLockError, lockDataDir } from '../core/node/dataDirLock';
import { hostHeaderName, normalizeHostName } from './http/requestGuard';
import { parsePublicUrl, PublicUrlError } from './http/publicUrl';
import {
  DEFAULT_KEEP_ALIVE_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_STREAMS,
  DEFAULT_MAX_STREAMS_PER_SESSION,
  SessionsServer,
} from './http/server';
import { FileSessionStore } from './store/sessionStore';
import { JournalServerStore } from './store/journalStore';
import { PostgresServerStore } from './store/postgres/postgresStore';
import type { ServerStore } from './store/serverStore';
import { startRetention, type RetentionPolicy, type Sweepable } from './store/retention';
import { runWorkerCommand } from './workers/workerCommand';
import { SECRET_ENV_NAMES } from '../agents/acp/agentProcess';
import { ALREADY_RUNNING_EXIT, AlreadyRunningError, runService } from './local/serviceMode';
import { checkServiceVersion } from '../core/node/servicePaths';
import { OidcAuthenticator } from './identity/oidcAuthenticator';
import { OIDC_ARG_OPTIONS, OIDC_HELP, OidcOptionsError, oidcSettingsFrom } from './identity/oidcOptions';
import { QUORUM_ARG_OPTIONS, QUORUM_HELP, QuorumOptionsError, quorumPolicyFrom } from './identity/quorumOptions';
import type { QuorumPolicy } from './identity/quorum';
import { NOTIFY_ARG_OPTIONS, NOTIFY_HELP, NotifyOptionsError, notifySettingsFrom } from './notifications/notifyOptions';
import { startNotifications } from './notifications/startNotifications';
import { agentFlag, databaseUrlFlag, integerFlag, parseFlags, readSecretFile, Shutdown, USAGE_EXIT, UsageError } from './commandLine';
import { SANDBOX_HELP, sandboxDecision, sandboxSettings } from './sandboxFlag';
import { HELD_KEY_HELP, heldKeysFlag } from './heldKeysFlag';
import type { AgentSandboxSettings } from '../agents/sandbox/agentSandbox';
import { errorMessage, errorStack } from '../core/errors';
import { recordingApprovals } from './changes/sessionWorkspace';

const COMMAND = 'ultraplan-server';

function helpText(): string {
  const kinds = Object.values(AGENT_KINDS)
    .map((k) => `                      ${k.usage.padEnd(22)} ${k.description}`)
    .join('\n');
  return `Usage: ultraplan-server --data-dir DIR --agent KIND:ARG [options]
       ultraplan-server --store postgres://… [options]    (a replica; agents run in workers)
       ultraplan-server worker --store postgres://… --agent KIND:ARG    (see worker --help)

Serves Ultraplan planning sessions over HTTP (the Sessions API and an event stream).

Options:
  --host HOST         address to bind (default 127.0.0.1; loopback unless you mean it)
  --port PORT         port to listen on (default 8787; 0 picks a free port)
  --data-dir DIR      where sessions are stored (created if missing); required without --store
  --store URL         keep sessions in PostgreSQL (postgres://user@host:port/db, no password):
                      any number of servers on one database serve any session; agents run in
                      \`ultraplan-server worker\` processes
  --database-url-file FILE
                      as --store, the URL (with its password) read from FILE: a mounted Secret
                      (mode 0400) or a pipe (/dev/stdin)
  --agent KIND:ARG    the agent that plans in each new session; required without --store. Kinds:
${kinds}
  --workspace DIR     the folder an agent works in (acp agents; default: the current directory)
  --token-file FILE   read the bearer token from FILE (a 0400/0600 file or a pipe, /dev/stdin)
  --insecure-no-auth  accept requests without a token; only with a loopback --host
${OIDC_HELP}${QUORUM_HELP}${NOTIFY_HELP}  --allowed-host NAME a Host name clients may use besides the bound address and localhost
                      (e.g. a proxy's name); repeatable. Other Host names are refused
  --public-url URL    the origin browsers reach this server at (https://plans.example.com; a
                      proxy, a load balancer): review links, the sign-in's redirect and webhook
                      links use it, and the review page is accepted from it alone
  --socket PATH       run as the local session service (docs/service.md): listen on this Unix
                      socket (or Windows named pipe) instead of a port; needs --token-file;
                      --agent is then a default, each session may name its own
  --service-version V the version the service reports and replaces others by
  --idle-exit-seconds N
                      service: exit after N seconds with no live session and no client (0: never)
${SANDBOX_HELP}${HELD_KEY_HELP}  --max-sessions N    sessions held at once, archived ones not counted (default ${DEFAULT_HOST_LIMITS.maxSessions})
  --max-sessions-per-user N
                      sessions one user (OIDC) holds, archived ones not counted; more is a 429
                      (default ${DEFAULT_HOST_LIMITS.maxSessionsPerUser})
  --max-live-per-user N
                      sessions of one user whose agent is at work (running, or waiting on an
                      answer) when they start another; more is a 429 (default ${DEFAULT_HOST_LIMITS.maxLivePerUser})
  --retain-archived-days N
                      delete sessions archived more than N days ago, with their events
                      (default: kept for good)
  --retain-audit-days N
                      delete audit rows older than N days (PostgreSQL; default: kept for good)
  --max-body-bytes N  largest request body (default ${DEFAULT_MAX_BODY_BYTES})
  --max-events-per-append N
                      events in one POST (default ${DEFAULT_HOST_LIMITS.maxEventsPerAppend})
  --max-streams N     event streams open at once (default ${DEFAULT_MAX_STREAMS})
  --max-streams-per-session N
                      event streams open on one session (default ${DEFAULT_MAX_STREAMS_PER_SESSION})
  -h, --help          show this text

Environment:
  ULTRAPLAN_SERVER_TOKEN  deprecated: the token, for a single user only (refused with --store or
                          OIDC); a variable stays readable in /proc for the server's life
  ULTRAPLAN_OIDC_*        the --oidc-… settings above (docs/identity.md)

On start it prints one line on stdout: ultraplan-server listening on http://HOST:PORT
SIGTERM or SIGINT shuts it down cleanly; sessions and events survive a restart.
`;
}

function usage(message: string): UsageError {
  return new UsageError(COMMAND, message);
}

function positiveInt(name: string, value: string | undefined, fallback: number, min = 1, max?: number): number {
  return integerFlag(COMMAND, name, value, fallback, { min, ...(max !== undefined ? { max } : {}) });
}

/** A number of days, or null when the flag is absent (kept for good). */
function optionalDays(name: string, value: string | undefined): number | null {
  return value === undefined ? null : positiveInt(name, value, 0);
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

async function main(argv: string[]): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const values = parseFlags(COMMAND, argv, {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8787' },
    'data-dir': { type: 'string' },
    store: { type: 'string' },
    'database-url-file': { type: 'string' },
    sandbox: { type: 'string' },
    'sandbox-share': { type: 'string', multiple: true },
    'sandbox-home': { type: 'string' },
    'sandbox-bwrap': { type: 'string' },
    agent: { type: 'string' },
    'agent-key-file': { type: 'string', multiple: true },
    workspace: { type: 'string' },
    'token-file': { type: 'string' },
    'insecure-no-auth': { type: 'boolean', default: false },
    'allowed-host': { type: 'string', multiple: true },
    'public-url': { type: 'string' },
    'max-sessions': { type: 'string' },
    'max-sessions-per-user': { type: 'string' },
    'max-live-per-user': { type: 'string' },
    'retain-archived-days': { type: 'string' },
    'retain-audit-days': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'max-events-per-append': { type: 'string' },
    'max-streams': { type: 'string' },
    'max-streams-per-session': { type: 'string' },
    socket: { type: 'string' },
    'service-version': { type: 'string' },
    'idle-exit-seconds': { type: 'string' },
    ...OIDC_ARG_OPTIONS,
    ...QUORUM_ARG_OPTIONS,
    ...NOTIFY_ARG_OPTIONS,
    // Hidden, for tests: the stream's keep-alive comment interval.
    'keep-alive-ms': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    process.stdout.write(helpText());
    return;
  }
  const host = values.host;
  const port = positiveInt('port', values.port, 8787, 0, 65535);
  const databaseUrl =
    values.socket === undefined
      ? await databaseUrlFlag(COMMAND, { store: values.store, file: values['database-url-file'] }, log)
      : undefined;
  if (databaseUrl !== undefined) {
    if (values['data-dir'] !== undefined) {
      throw usage('--data-dir is for the journal; with --store postgres://… the sessions live in the database');
    }
    if (values.agent !== undefined || values['agent-key-file'] !== undefined) {
      throw usage(
        'with --store postgres://… agents run in workers: give --agent and --agent-key-file to `ultraplan-server worker`, not to the server',
      );
    }
  } else if (!values['data-dir']) throw usage('--data-dir DIR is required (where sessions are stored), or --store postgres://…');
  if (databaseUrl === undefined && !values.agent && values.socket === undefined)
    throw usage(
      `--agent is required, one of: ${Object.values(AGENT_KINDS)
        .map((k) => k.usage)
        .join(', ')}`,
    );
  const limits = {
    maxSessions: positiveInt('max-sessions', values['max-sessions'], DEFAULT_HOST_LIMITS.maxSessions),
    maxSessionsPerUser: positiveInt('max-sessions-per-user', values['max-sessions-per-user'], DEFAULT_HOST_LIMITS.maxSessionsPerUser),
    maxLivePerUser: positiveInt('max-live-per-user', values['max-live-per-user'], DEFAULT_HOST_LIMITS.maxLivePerUser),
    maxEventsPerAppend: positiveInt('max-events-per-append', values['max-events-per-append'], DEFAULT_HOST_LIMITS.maxEventsPerAppend),
  };
  const retention: RetentionPolicy = {
    archivedDays: optionalDays('retain-archived-days', values['retain-archived-days']),
    auditDays: optionalDays('retain-audit-days', values['retain-audit-days']),
  };
  const allowedHosts = values['allowed-host'] ?? [];
  for (const name of allowedHosts) {
    // Compared with the name part of a Host header, so a port or a scheme here would never match.
    if (hostHeaderName(name) !== normalizeHostName(name)) {
      throw usage(
        `--allowed-host takes a host name without scheme or port (IPv6 in brackets), e.g. plans.internal; got ${JSON.stringify(name)}`,
      );
    }
  }
  let publicUrl: string | undefined;
  try {
    publicUrl = values['public-url'] === undefined ? undefined : parsePublicUrl(values['public-url']);
  } catch (err) {
    throw err instanceof PublicUrlError ? usage(err.message) : err;
  }
  const maxStreams = positiveInt('max-streams', values['max-streams'], DEFAULT_MAX_STREAMS);
  const maxStreamsPerSession = positiveInt('max-streams-per-session', values['max-streams-per-session'], DEFAULT_MAX_STREAMS_PER_SESSION);
  const maxBodyBytes = positiveInt('max-body-bytes', values['max-body-bytes'], DEFAULT_MAX_BODY_BYTES, 64);
  const keepAliveMs = positiveInt(
    'keep-alive-ms',
    values['keep-alive-ms'] ?? process.env.ULTRAPLAN_SERVER_KEEPALIVE_MS,
    DEFAULT_KEEP_ALIVE_MS,
    10,
  );

  if (values.socket !== undefined) {
    if (values['token-file'] === undefined) throw usage('--socket needs --token-file FILE (a 0600 file)');
    let version: string;
    try {
      version = checkServiceVersion(values['service-version'] ?? '0');
    } catch (err) {
      throw usage(`--service-version: ${errorMessage(err)}`);
    }
    for (const name of SECRET_ENV_NAMES) delete process.env[name];
    const decided = sandboxDecision(
      COMMAND,
      {
        // The extension asks for its window's choice (ultraplan.localService.sandbox); started by
        // hand without --sandbox, the person's own service runs its agents unsandboxed.
        mode: values.sandbox ?? 'off',
        multiUser: false,
        root: path.join(path.resolve(values['data-dir'] as string), 'sandboxes'),
        shared: values['sandbox-share'],
        homeTemplate: values['sandbox-home'],
        bwrap: values['sandbox-bwrap'],
      },
      log,
    );
    // Its keys come with the window that started it, in its environment: held all the same.
    const sandbox = await withHeldKeys(decided.settings, { entries: values['agent-key-file'], fromEnvironment: 'note' }, log);
    const defaultAgent = values.agent
      ? await agentFlag(COMMAND, values.agent, { log, secretFiles: [path.resolve(values['token-file'])], ...(sandbox ? { sandbox } : {}) })
      : undefined;
    return runService({
      socket: values.socket,
      dataDir: path.resolve(values['data-dir'] as string),
      tokenFile: path.resolve(values['token-file']),
      version,
      idleExitMs: positiveInt('idle-exit-seconds', values['idle-exit-seconds'], 600, 0) * 1000,
      ...(defaultAgent ? { defaultAgent: defaultAgent.factory } : {}),
      ...(sandbox ? { sandbox } : {}),
      sandboxState: decided.state,
      limits,
      server: { keepAliveMs, maxBodyBytes, maxStreams, maxStreamsPerSession, allowedHosts },
      // Its log is a file read after the fact: every line says when (request lines already do).
      log: (line) => log(/^\d{4}-\d\d-\d\dT/.test(line) ? line : `${new Date().toISOString()} ${line}`),
    });
  }

  let oidc;
  let quorum: QuorumPolicy;
  try {
    oidc = oidcSettingsFrom(values);
    quorum = quorumPolicyFrom(values, { reviewGroups: oidc ? oidc.reviewGroups : null, postgres: databaseUrl !== undefined });
  } catch (err) {
    if (err instanceof OidcOptionsError || err instanceof QuorumOptionsError) throw usage(err.message);
    throw err;
  }
  const notify = await notifySettingsFrom(values, {
    postgres: databaseUrl !== undefined,
    log,
    readSecret: (file) => readSecretFile(COMMAND, 'notify-webhook-secret-file', file, log),
  }).catch((err: unknown) => {
    throw err instanceof NotifyOptionsError ? usage(err.message) : err;
  });
  const token = await readToken(values['token-file'], databaseUrl !== undefined || Boolean(oidc), log);
  // Read once, then gone from our environment, so nothing we start (agents) inherits it.
  for (const name of SECRET_ENV_NAMES) delete process.env[name];
  const authenticator = oidc ? new OidcAuthenticator(oidc, log) : undefined;
  if (authenticator) {
    // One shared secret beside per-user tokens would open every session to whoever holds it.
    if (token !== null) log('ultraplan-server: the shared token is not accepted with --oidc-issuer: every request needs a user token');
    log(`ultraplan-server: users' tokens from ${authenticator.settings.issuer} (audience ${authenticator.settings.audience})`);
    authenticator.keys().catch((err: unknown) => log(`ultraplan-server: WARNING: ${errorMessage(err)}`));
  } else if (token === null) {
    if (!values['insecure-no-auth']) {
      throw usage('no token: set ULTRAPLAN_SERVER_TOKEN or pass --token-file FILE (or --insecure-no-auth on a loopback host)');
    }
    if (!isLoopbackHost(host)) {
      throw usage(
        `refusing --insecure-no-auth on ${host}: without a token the server only binds a loopback address (127.0.0.1, ::1, localhost)`,
      );
    }
    log('ultraplan-server: WARNING: --insecure-no-auth: requests are not authenticated');
  } else if (values['insecure-no-auth']) {
    log('ultraplan-server: a token is set, so --insecure-no-auth is ignored');
  }

  const opened =
    databaseUrl === undefined
      ? await openJournal(values, log, limits, (dataDir) =>
          withHeldKeys(
            sandboxSettings(
              COMMAND,
              {
                mode: values.sandbox,
                multiUser: Boolean(oidc),
                root: path.join(dataDir, 'sandboxes'),
                shared: values['sandbox-share'],
                homeTemplate: values['sandbox-home'],
                bwrap: values['sandbox-bwrap'],
              },
              log,
            ),
            { entries: values['agent-key-file'] },
            log,
          ),
        )
      : await openPostgres(databaseUrl, log, limits, quorum);
  const { store, release } = opened;
  const server = new SessionsServer({
    store,
    token,
    ...(authenticator ? { authenticator } : {}),
    keepAliveMs,
    maxBodyBytes,
    maxStreams,
    maxStreamsPerSession,
    allowedHosts,
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    log,
  });
  const { port: boundPort } = await server.listen(port, host);
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const stopRetention = startRetention(opened.sweepable, retention, log);
  let notifications: Awaited<ReturnType<typeof startNotifications>> | null = null;
  // Before the listening line: whoever reads it as "ready" may signal at once, and must get a clean stop.
  new Shutdown(
    COMMAND,
    async (signal) => {
      log(`ultraplan-server: ${signal}: shutting down`);
      stopRetention();
      await server.close();
      await notifications?.close();
      await store.close();
      await release();
      log('ultraplan-server: stopped');
    },
    log,
  ).onSignals(true);
  process.stdout.write(`ultraplan-server listening on http://${urlHost}:${boundPort}\n`);
  log(`ultraplan-server: ${opened.agentLabel}; sessions in ${store.description}; ${await store.countSessions()} stored sessions`);
  notifications = notify ? await startNotifications(store, notify, quorum, publicUrl ?? `http://${urlHost}:${boundPort}`, log) : null;
}

type ParsedValues = {
  workspace?: string | undefined;
  agent?: string | undefined;
  'token-file'?: string | undefined;
  'data-dir'?: string | undefined;
};
type HostLimits = Pick<SessionHostLimits, 'maxSessions' | 'maxSessionsPerUser' | 'maxLivePerUser' | 'maxEventsPerAppend'>;

interface OpenedStore {
  store: ServerStore;
  /** The same store, for retention. */
  sweepable: Sweepable;
  /** For the start-up line: which agent runs the sessions, or where. */
  agentLabel: string;
  release(): Promise<void>;
}

async function openPostgres(url: string, log: (line: string) => void, limits: HostLimits, quorum: QuorumPolicy): Promise<OpenedStore> {
  const store = await PostgresServerStore.open({ connectionString: url, log, limits, quorum });
  return { store, sweepable: store, agentLabel: 'agents run in workers', release: async () => {} };
}

async function openJournal(
  values: ParsedValues,
  log: (line: string) => void,
  limits: HostLimits,
  sandboxFor: (dataDir: string) => Promise<AgentSandboxSettings | undefined>,
): Promise<OpenedStore> {
  const workspace = values.workspace === undefined ? undefined : path.resolve(values.workspace);
  if (
    workspace !== undefined &&
    !(await fs.stat(workspace).then(
      (stat) => stat.isDirectory(),
      () => false,
    ))
  ) {
    throw usage(`--workspace ${workspace} is not a directory`);
  }
  const dataDir = path.resolve(values['data-dir'] as string);
  const sandbox = await sandboxFor(dataDir);
  const agent = await agentFlag(COMMAND, values.agent ?? '', {
    log,
    ...(workspace !== undefined ? { workspace } : {}),
    ...(values['token-file'] !== undefined ? { secretFiles: [path.resolve(values['token-file'])] } : {}),
    ...(sandbox ? { sandbox } : {}),
  });

  await fs.mkdir(dataDir, { recursive: true });
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockError) throw usage(err.message);
    throw err;
  }
  // Every session's agent works in this one folder (agentSpec.ts resolves the same default).
  const agentWorkspace = workspace ?? process.cwd();
  const sessionHost = await SessionHost.open({
    agentFactory: agent.factory,
    store: new FileSessionStore(dataDir, { log }),
    log,
    limits,
    approvals: recordingApprovals(() => agentWorkspace, log),
  });
  const store = new JournalServerStore(sessionHost, dataDir, () => agentWorkspace);
  return {
    store,
    sweepable: store,
    agentLabel: `agent ${agent.label}`,
    release: releaseLock,
  };
}

/**
 * The sandbox settings with the model keys agents get stand-ins for (--agent-key-file, and key
 * variables of this process's environment when agents are sandboxed).
 */
async function withHeldKeys(
  sandbox: AgentSandboxSettings | undefined,
  flag: { entries: readonly string[] | undefined; fromEnvironment?: 'warning' | 'note' },
  log: (line: string) => void,
): Promise<AgentSandboxSettings | undefined> {
  const heldKeys = await heldKeysFlag(COMMAND, { ...flag, sandboxed: sandbox !== undefined, env: process.env }, log);
  return sandbox && heldKeys.size > 0 ? { ...sandbox, heldKeys } : sandbox;
}

/**
 * The shared token: from --token-file (a file or a pipe), else, for one person's server only, the
 * deprecated ULTRAPLAN_SERVER_TOKEN. A variable cannot be taken back out of /proc/<pid>/environ
 * (that shows the environment the process was started with), so a server for several people
 * refuses it.
 */
async function readToken(tokenFile: string | undefined, multiUser: boolean, log: (line: string) => void): Promise<string | null> {
  if (tokenFile !== undefined) return readSecretFile(COMMAND, 'token-file', tokenFile, log);
  const token = process.env.ULTRAPLAN_SERVER_TOKEN?.trim();
  if (!token) return null;
  if (multiUser) {
    throw usage(
      'ULTRAPLAN_SERVER_TOKEN is not read with --store or OIDC: pass the token in a file (--token-file FILE, a mounted Secret, mode 0400) or a pipe (--token-file /dev/stdin)',
    );
  }
  log('ultraplan-server: WARNING: ULTRAPLAN_SERVER_TOKEN is deprecated (it stays readable in /proc/<pid>/environ): use --token-file');
  return token;
}

const argv = process.argv.slice(2);
const command = argv[0] === 'worker' ? runWorkerCommand(argv.slice(1), (line) => process.stderr.write(`${line}\n`)) : main(argv);
command.catch((err: unknown) => {
  if (err instanceof AlreadyRunningError) {
    process.stderr.write(`ultraplan-server: ${err.message}\n`);
    process.exit(ALREADY_RUNNING_EXIT);
  }
  if (err instanceof UsageError) {
    process.stderr.write(err.explain());
    process.exit(USAGE_EXIT);
  }
  process.stderr.write(`ultraplan-server: ${errorStack(err)}\n`);
  process.exit(1);
});
