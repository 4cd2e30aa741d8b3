// `--agent-key-file NAME=FILE`: an agent's model API key read from a file (a mounted Secret), kept
// in the service's memory and never handed to an agent: each sandboxed agent gets a stand-in, and
// its session's egress proxy adds the key on requests to its model API (agents/sandbox/heldKeys.ts).
import { modelKeyNames } from '../agents/sandbox';
import { readSecretFile, UsageError } from './commandLine';

export const HELD_KEY_HELP = `  --agent-key-file NAME=FILE
                      an agent's model API key from FILE (a mounted Secret, mode 0400 or 0600;
                      refused if others can read it), NAME its variable (ANTHROPIC_API_KEY,
                      OPENAI_API_KEY, …); repeatable; needs the sandbox. Agents get a stand-in,
                      their sandbox's proxy adds the key on calls to their model API. A key
                      variable in the environment is held the same way
`;

export interface HeldKeysChoice {
  /** The flag's values, NAME=FILE each. */
  entries: readonly string[] | undefined;
  /** Agents run sandboxed: only then can a key be held back from them. */
  sandboxed: boolean;
  env: NodeJS.ProcessEnv;
  /**
   * How a key found in the environment is announced: a warning where a file is the way (a server,
   * a worker), a note where the environment is (the local service gets its window's).
   */
  fromEnvironment?: 'warning' | 'note';
}

/** A key alone on one line: what a Secret's file holds (a `NAME=value` line is a common slip). */
function checkKey(command: string, name: string, file: string, key: string): string {
  if (/^[A-Z][A-Z0-9_]*=/.test(key)) {
    throw new UsageError(command, `--agent-key-file: ${file} holds a NAME=value line; it must hold the ${name} key alone`);
  }
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new UsageError(
      command,
      `--agent-key-file: ${file} must hold the ${name} key alone, on one line, without spaces or control characters`,
    );
  }
  return key;
}

/** The keys agents get stand-ins for, by variable name (empty when unsandboxed and no flag). */
export async function heldKeysFlag(command: string, choice: HeldKeysChoice, log: (line: string) => void): Promise<Map<string, string>> {
  const names = modelKeyNames();
  const held = new Map<string, string>();
  for (const entry of choice.entries ?? []) {
    const equals = entry.indexOf('=');
    const name = equals > 0 ? entry.slice(0, equals) : '';
    const file = entry.slice(equals + 1);
    if (!name || !file) throw new UsageError(command, `--agent-key-file takes NAME=FILE, got ${JSON.stringify(entry)}`);
    if (!names.includes(name)) throw new UsageError(command, `--agent-key-file: ${name} is no agent's key variable (${names.join(', ')})`);
    if (held.has(name)) throw new UsageError(command, `--agent-key-file: ${name} is given twice`);
    if (choice.env[name] !== undefined) {
      throw new UsageError(command, `${name} is both in the environment and in --agent-key-file: unset the variable`);
    }
    if (!choice.sandboxed) {
      throw new UsageError(command, '--agent-key-file needs the sandbox (--sandbox auto or required): its proxy is what adds the key');
    }
    held.set(name, checkKey(command, name, file, await readSecretFile(command, 'agent-key-file', file, log, { refuseExposed: true })));
  }
  if (!choice.sandboxed) return held;
  for (const name of names) {
    const value = choice.env[name];
    if (value === undefined || value === '' || held.has(name)) continue;
    held.set(name, value);
    log(
      choice.fromEnvironment === 'note'
        ? `${command}: agents get a stand-in for ${name}; their sandbox's proxy adds the key on calls to their model API`
        : `${command}: WARNING: ${name} is in this process's environment (its /proc/<pid>/environ shows it to this user's processes outside the sandboxes); agents get a stand-in, but pass it with --agent-key-file ${name}=FILE`,
    );
  }
  return held;
}
