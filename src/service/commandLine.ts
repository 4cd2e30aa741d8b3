// What the commands of ultraplan-server share on their command lines (the API server in cli.ts,
// `worker` in workerCommand.ts, the local service that cli.ts starts with --socket): one way to
// parse flags, to read numbers and the database URL, to word a refusal, and to stop on a signal.
// A refusal of the command line is a UsageError: exit code 2 and a pointer to that command's help.
import { readFile, stat } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createAgentFactory } from '../agents/agentSpec';
import { errorMessage } from '../core/errors';

export const USAGE_EXIT = 2;

export class UsageError extends Error {
  constructor(
    /** The command refused, as a person types it: `ultraplan-server`, `ultraplan-server worker`. */
    readonly command: string,
    message: string,
  ) {
    super(message);
  }

  /** What the person reads on stderr. */
  explain(): string {
    return `${this.command}: ${this.message}\nRun ${this.command} --help for usage.\n`;
  }
}

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** One command's flags: strict (an unknown flag is refused), no positional arguments. */
export function parseFlags<const O extends FlagOptions>(command: string, argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(command, errorMessage(err));
  }
}

/** A whole number flag: `fallback` when absent, refused below `min` or above `max`. */
export function integerFlag(
  command: string,
  name: string,
  value: string | undefined,
  fallback: number,
  { min = 1, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new UsageError(command, `--${name} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  if (Number(value) > max) throw new UsageError(command, `--${name} must be at most ${max}, got ${value}`);
  return Number(value);
}

export const DATABASE_URL_ENV = 'ULTRAPLAN_DATABASE_URL';

/**
 * A secret from a file (a mounted Secret, a 0600 file) or a pipe (`/dev/stdin`, `/dev/fd/3`):
 * never from an argument or a variable, which `ps` and `/proc/<pid>/environ` show to whoever may
 * look, and which every child would inherit. A regular file others can read is named in a warning,
 * or refused with `refuseExposed` (as ssh refuses a private key others can read).
 */
export async function readSecretFile(
  command: string,
  flag: string,
  file: string,
  log: (line: string) => void,
  { refuseExposed = false }: { refuseExposed?: boolean } = {},
): Promise<string> {
  const cannotRead = (err: unknown) =>
    new UsageError(command, `--${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  const { mode, gid } = await stat(file).catch((err: unknown) => {
    throw cannotRead(err);
  });
  // Readable by others, or by a group we are not (a pod's fsGroup is ours: the kubelet adds group read).
  const exposed = (mode & 0o007) !== 0 || ((mode & 0o070) !== 0 && gid !== process.getgid?.());
  if (process.platform !== 'win32' && (mode & 0o170000) === 0o100000 && exposed) {
    const octal = (mode & 0o777).toString(8).padStart(3, '0');
    if (refuseExposed) {
      throw new UsageError(
        command,
        `--${flag}: ${file} can be read by other users (mode ${octal}), so its secret is theirs too: chmod 600 ${file} (or 400), then start again`,
      );
    }
    log(`${command}: WARNING: --${flag} ${file} can be read by other users (mode ${octal}); chmod 600 it`);
  }
  const text = await readFile(file, 'utf8').catch((err: unknown) => {
    throw cannotRead(err);
  });
  const secret = text.trim();
  if (!secret) throw new UsageError(command, `--${flag}: ${file} is empty`);
  return secret;
}

function checkDatabaseUrl(command: string, url: string, where: string): string {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError(
      command,
      `${where} takes a PostgreSQL URL, postgres://user:password@host:port/database (the journal is the default: use --data-dir)`,
    );
  }
  return url;
}

/**
 * The PostgreSQL URL from --database-url-file, or from --store when it holds no password (a
 * password on the command line is in every user's `ps`); undefined when neither is given. The
 * ULTRAPLAN_DATABASE_URL variable is refused: a database serves several people, and a variable
 * stays in `/proc/<pid>/environ` for the process's whole life whatever we delete.
 */
export async function databaseUrlFlag(
  command: string,
  flags: { store?: string | undefined; file?: string | undefined },
  log: (line: string) => void,
): Promise<string | undefined> {
  if (process.env[DATABASE_URL_ENV] !== undefined) {
    throw new UsageError(
      command,
      `${DATABASE_URL_ENV} is not read: pass the URL in a file (--database-url-file FILE, e.g. a mounted Secret, mode 0400) or a pipe (--database-url-file /dev/stdin), so no process listing or /proc/<pid>/environ shows it`,
    );
  }
  if (flags.store !== undefined && flags.file !== undefined) throw new UsageError(command, 'give --store or --database-url-file, not both');
  if (flags.file !== undefined)
    return checkDatabaseUrl(command, await readSecretFile(command, 'database-url-file', flags.file, log), '--database-url-file');
  if (flags.store === undefined) return undefined;
  const url = checkDatabaseUrl(command, flags.store, '--store');
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    throw new UsageError(command, '--store: not a URL');
  }
  if (password) {
    throw new UsageError(
      command,
      '--store holds a password, which every user of this machine can read in `ps`: put the URL in --database-url-file FILE',
    );
  }
  return url;
}

/** createAgentFactory, with a spec it cannot run refused as the command line's mistake. */
export async function agentFlag(command: string, spec: string, context: Parameters<typeof createAgentFactory>[1]) {
  try {
    return await createAgentFactory(spec, context);
  } catch (err) {
    throw new UsageError(command, `--agent: ${errorMessage(err)}`);
  }
}

/**
 * A process's clean stop, run once whoever asks first (a signal, an idle timer, a newer version);
 * then the process exits 0, or 1 if stopping failed.
 */
export class Shutdown {
  private started = false;

  constructor(
    private readonly name: string,
    private readonly work: (why: string) => Promise<void>,
    private readonly log: (line: string) => void,
  ) {}

  get stopping(): boolean {
    return this.started;
  }

  /** Starts the stop; false when it had already started. */
  begin(why: string): boolean {
    if (this.started) return false;
    this.started = true;
    this.work(why).then(
      () => process.exit(0),
      (err: unknown) => {
        this.log(`${this.name}: shutdown failed: ${errorMessage(err)}`);
        process.exit(1);
      },
    );
    return true;
  }

  /**
   * SIGTERM and SIGINT begin the stop. With `forceOnRepeat`, a second signal while stopping exits
   * 1 at once: the person asked twice.
   */
  onSignals(forceOnRepeat: boolean): void {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        if (this.begin(signal) || !forceOnRepeat) return;
        this.log(`${this.name}: ${signal} again; exiting now`);
        process.exit(1);
      });
    }
  }
}
