// An agent command that starts with `env` (`env HOME=/x CLAUDE_CONFIG_DIR=/y claude-agent-acp`)
// runs the agent with an environment other than the one we spawn: its home, and so its plans
// folder, is where those assignments say. Read the way coreutils' env reads its arguments.
import * as path from 'node:path';

export type Environment = Readonly<Record<string, string | undefined>>;

/** What `env` does before it runs the command: start empty (-i), unset names (-u), set names. */
interface EnvCommand {
  ignoreEnvironment: boolean;
  unset: string[];
  set: Array<[string, string]>;
}

const ASSIGNMENT = /^([^=]+)=([\s\S]*)$/;

/**
 * The environment changes of an `env` command line, or undefined when the command is not `env`
 * or uses an option this reader does not follow (-S splits a string into more arguments; -C
 * changes the folder): then the agent is taken to see the environment it was spawned with.
 */
function envCommandOf(argv: readonly string[]): EnvCommand | undefined {
  if (argv.length === 0 || path.basename(argv[0] ?? '') !== 'env') return undefined;
  const command: EnvCommand = { ignoreEnvironment: false, unset: [], set: [] };
  let options = true;
  for (let index = 1; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (options && (arg === '-i' || arg === '--ignore-environment' || arg === '-')) command.ignoreEnvironment = true;
    else if (options && (arg === '-u' || arg === '--unset')) command.unset.push(argv[++index] ?? '');
    else if (options && arg.startsWith('--unset=')) command.unset.push(arg.slice('--unset='.length));
    else if (options && /^-u./.test(arg)) command.unset.push(arg.slice(2));
    else if (options && (arg === '-0' || arg === '--null' || arg === '-v' || arg === '--debug')) continue;
    else if (options && arg === '--') options = false;
    else if (options && arg.startsWith('-')) return undefined;
    else {
      const assignment = ASSIGNMENT.exec(arg);
      if (!assignment) return command;
      options = false;
      command.set.push([assignment[1] ?? '', assignment[2] ?? '']);
    }
  }
  return command;
}

/** The environment the agent program itself sees when `argv` is spawned with `spawned`. */
export function environmentSeenBy(argv: readonly string[], spawned: Environment): Environment {
  const command = envCommandOf(argv);
  if (!command) return spawned;
  const seen: Record<string, string | undefined> = command.ignoreEnvironment ? {} : { ...spawned };
  for (const name of command.unset) delete seen[name];
  for (const [name, value] of command.set) seen[name] = value;
  return seen;
}
