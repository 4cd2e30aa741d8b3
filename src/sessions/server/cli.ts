#!/usr/bin/env node
// ultraplan-server: the self-hosted session server (built to dist/server.mjs).
// stdout carries exactly one line, the listening address, so scripts can wait for it; every
// other line (requests, warnings, errors) goes to stderr.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AGENT_KINDS } from '../agentSpec';
import { DEFAULT_HOST_LIMITS, SessionHost } from '../host';
import { DataDirLockError, lockDataDir } from '../dataDirLock';
import { hostHeaderName, normalizeHostName } from '../requestGuard';
import {
  DEFAULT_KEEP_ALIVE_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_STREAMS,
  DEFAULT_MAX_STREAMS_PER_SESSION,
  SessionsServer,
} from './server';
import { FileSessionStore } from '../store';
import { JournalServerStore } from '../store/journalStore';
import { PostgresServerStore } from '../store/postgres/postgresStore';
import type { ServerStore } from '../store/serverStore';
import { runWorkerCommand } from './workerCommand';
import { SECRET_ENV_NAMES } from '../acp/agentProcess';
import { ALREADY_RUNNING_EXIT, AlreadyRunningError, runService } from './serviceMode';
import { checkServiceVersion } from '../service/servicePaths';
import { OidcAuthenticator } from './oidcAuthenticator';
import { OIDC_ARG_OPTIONS, OIDC_HELP, OidcOptionsError, oidcSettingsFrom } from './oidcOptions';
import { agentFlag, databaseUrlFlag, integerFlag, messageOf, parseFlags, Shutdown, USAGE_EXIT, UsageError } from './commandLine';

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
  --store URL         keep sessions in PostgreSQL (postgres://user:password@host:port/db; else
                      ULTRAPLAN_DATABASE_URL): any number of servers on one database serve any
                      session; agents run in \`ultraplan-server worker\` processes
  --agent KIND:ARG    the agent that plans in each new session; required without --store. Kinds:
${kinds}
  --workspace DIR     the folder an agent works in (acp agents; default: the current directory)
  --token-file FILE   read the bearer token from FILE (else ULTRAPLAN_SERVER_TOKEN)
  --insecure-no-auth  accept requests without a token; only with a loopback --host
${OIDC_HELP}  --allowed-host NAME a Host name clients may use besides the bound address and localhost
                      (e.g. a proxy's name); repeatable. Other Host names are refused
  --socket PATH       run as the local session service (docs/service.md): listen on this Unix
                      socket (or Windows named pipe) instead of a port; needs --token-file;
                      --agent is then a default, each session may name its own
  --service-version V the version the service reports and replaces others by
  --idle-exit-seconds N
                      service: exit after N seconds with no live session and no client (0: never)
  --max-sessions N    sessions held at once (default ${DEFAULT_HOST_LIMITS.maxSessions})
  --max-body-bytes N  largest request body (default ${DEFAULT_MAX_BODY_BYTES})
  --max-events-per-append N
                      events in one POST (default ${DEFAULT_HOST_LIMITS.maxEventsPerAppend})
  --max-streams N     event streams open at once (default ${DEFAULT_MAX_STREAMS})
  --max-streams-per-session N
                      event streams open on one session (default ${DEFAULT_MAX_STREAMS_PER_SESSION})
  -h, --help          show this text

Environment:
  ULTRAPLAN_SERVER_TOKEN  the bearer token clients must send (Authorization: Bearer <token>)
  ULTRAPLAN_DATABASE_URL  the PostgreSQL database, when --store is not given
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
    agent: { type: 'string' },
    workspace: { type: 'string' },
    'token-file': { type: 'string' },
    'insecure-no-auth': { type: 'boolean', default: false },
    'allowed-host': { type: 'string', multiple: true },
    'max-sessions': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'max-events-per-append': { type: 'string' },
    'max-streams': { type: 'string' },
    'max-streams-per-session': { type: 'string' },
    socket: { type: 'string' },
    'service-version': { type: 'string' },
    'idle-exit-seconds': { type: 'string' },
    ...OIDC_ARG_OPTIONS,
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
  const databaseUrl = values.socket === undefined ? databaseUrlFlag(COMMAND, values.store) : undefined;
  if (databaseUrl !== undefined) {
    if (values['data-dir'] !== undefined) {
      throw usage('--data-dir is for the journal; with --store postgres://… the sessions live in the database');
    }
    if (values.agent !== undefined) {
      throw usage('with --store postgres://… agents run in workers: give --agent to `ultraplan-server worker`, not to the server');
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
    maxEventsPerAppend: positiveInt('max-events-per-append', values['max-events-per-append'], DEFAULT_HOST_LIMITS.maxEventsPerAppend),
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
      throw usage(`--service-version: ${messageOf(err)}`);
    }
    for (const name of SECRET_ENV_NAMES) delete process.env[name];
    const defaultAgent = values.agent
      ? await agentFlag(COMMAND, values.agent, { log, secretFiles: [path.resolve(values['token-file'])] })
      : undefined;
    return runService({
      socket: values.socket,
      dataDir: path.resolve(values['data-dir'] as string),
      tokenFile: path.resolve(values['token-file']),
      version,
      idleExitMs: positiveInt('idle-exit-seconds', values['idle-exit-seconds'], 600, 0) * 1000,
      ...(defaultAgent ? { defaultAgent: defaultAgent.factory } : {}),
      limits,
      server: { keepAliveMs, maxBodyBytes, maxStreams, maxStreamsPerSession, allowedHosts },
      // Its log is a file read after the fact: every line says when (request lines already do).
      log: (line) => log(/^\d{4}-\d\d-\d\dT/.test(line) ? line : `${new Date().toISOString()} ${line}`),
    });
  }

  let oidc;
  try {
    oidc = oidcSettingsFrom(values);
  } catch (err) {
    if (err instanceof OidcOptionsError) throw usage(err.message);
    throw err;
  }
  const token = await readToken(values['token-file'], log);
  // Read once, then gone from our environment, so nothing we start (agents) inherits it.
  for (const name of SECRET_ENV_NAMES) delete process.env[name];
  const authenticator = oidc ? new OidcAuthenticator(oidc, log) : undefined;
  if (authenticator) {
    // One shared secret beside per-user tokens would open every session to whoever holds it.
    if (token !== null) log('ultraplan-server: the shared token is not accepted with --oidc-issuer: every request needs a user token');
    log(`ultraplan-server: users' tokens from ${authenticator.settings.issuer} (audience ${authenticator.settings.audience})`);
    authenticator.keys().catch((err: unknown) => log(`ultraplan-server: WARNING: ${err instanceof Error ? err.message : String(err)}`));
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

  const opened = databaseUrl === undefined ? await openJournal(values, log, limits) : await openPostgres(databaseUrl, log, limits);
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
    log,
  });
  const { port: boundPort } = await server.listen(port, host);
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  process.stdout.write(`ultraplan-server listening on http://${urlHost}:${boundPort}\n`);
  log(`ultraplan-server: ${opened.agentLabel}; sessions in ${store.description}; ${await store.countSessions()} stored sessions`);

  new Shutdown(
    COMMAND,
    async (signal) => {
      log(`ultraplan-server: ${signal}: shutting down`);
      await server.close();
      await store.close();
      await release();
      log('ultraplan-server: stopped');
    },
    log,
  ).onSignals(true);
}

type ParsedValues = {
  workspace?: string | undefined;
  agent?: string | undefined;
  'token-file'?: string | undefined;
  'data-dir'?: string | undefined;
};
type HostLimits = { maxSessions: number; maxEventsPerAppend: number };

interface OpenedStore {
  store: ServerStore;
  /** For the start-up line: which agent runs the sessions, or where. */
  agentLabel: string;
  release(): Promise<void>;
}

async function openPostgres(url: string, log: (line: string) => void, limits: HostLimits): Promise<OpenedStore> {
  const store = await PostgresServerStore.open({ connectionString: url, log, limits });
  return { store, agentLabel: 'agents run in workers', release: async () => {} };
}

async function openJournal(values: ParsedValues, log: (line: string) => void, limits: HostLimits): Promise<OpenedStore> {
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
  const agent = await agentFlag(COMMAND, values.agent ?? '', {
    log,
    ...(workspace !== undefined ? { workspace } : {}),
    ...(values['token-file'] !== undefined ? { secretFiles: [path.resolve(values['token-file'])] } : {}),
  });

  const dataDir = path.resolve(values['data-dir'] as string);
  await fs.mkdir(dataDir, { recursive: true });
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirLockError) throw usage(err.message);
    throw err;
  }
  const sessionHost = await SessionHost.open({ agentFactory: agent.factory, store: new FileSessionStore(dataDir, { log }), log, limits });
  return {
    store: new JournalServerStore(sessionHost, dataDir),
    agentLabel: `agent ${agent.label}`,
    release: releaseLock,
  };
}

async function readToken(tokenFile: string | undefined, log: (line: string) => void): Promise<string | null> {
  if (tokenFile !== undefined) {
    let text: string;
    try {
      text = await fs.readFile(tokenFile, 'utf8');
      // Loopback is shared by every local user: a token they can read opens the server to them.
      const { mode } = await fs.stat(tokenFile);
      if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
        log(
          `ultraplan-server: WARNING: --token-file ${tokenFile} can be read by other users (mode ${(mode & 0o777).toString(8)}); chmod 600 it`,
        );
      }
    } catch (err) {
      throw usage(`--token-file: cannot read ${tokenFile} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const token = text.trim();
    if (!token) throw usage(`--token-file: ${tokenFile} is empty`);
    return token;
  }
  const token = process.env.ULTRAPLAN_SERVER_TOKEN?.trim();
  return token ? token : null;
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
  process.stderr.write(`ultraplan-server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
