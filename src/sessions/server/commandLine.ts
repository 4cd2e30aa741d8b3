// What the commands of ultraplan-server share on their command lines (the API server in cli.ts,
// `worker` in workerCommand.ts, the local service that cli.ts starts with --socket): one way to
// parse flags, to read numbers and the database URL, to word a refusal, and to stop on a signal.
// A refusal of the command line is a UsageError: exit code 2 and a pointer to that command's help.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createAgentFactory } from '../agentSpec';

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

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** One command's flags: strict (an unknown flag is refused), no positional arguments. */
export function parseFlags<const O extends FlagOptions>(command: string, argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(command, messageOf(err));
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
 * The PostgreSQL URL from --store, else ULTRAPLAN_DATABASE_URL; undefined when neither is set.
 * The variable is read once and removed from the environment, so nothing started later (agents)
 * inherits the database's password.
 */
export function databaseUrlFlag(command: string, flag: string | undefined): string | undefined {
  const url = flag ?? (process.env[DATABASE_URL_ENV]?.trim() || undefined);
  delete process.env[DATABASE_URL_ENV];
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError(
      command,
      '--store takes a PostgreSQL URL, postgres://user:password@host:port/database (the journal is the default: use --data-dir)',
    );
  }
  return url;
}

/** createAgentFactory, with a spec it cannot run refused as the command line's mistake. */
export async function agentFlag(command: string, spec: string, context: Parameters<typeof createAgentFactory>[1]) {
  try {
    return await createAgentFactory(spec, context);
  } catch (err) {
    throw new UsageError(command, `--agent: ${messageOf(err)}`);
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
        this.log(`${this.name}: shutdown failed: ${messageOf(err)}`);
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
