// Where this machine's bubblewrap is, for the agents' sandbox (src/agents/sandbox) and for the
// extension that starts the local service and hands it the path: one on PATH (a distribution's
// package), else the one Ultraplan's setup unpacks into its cache (scripts/agents-config.cjs
// privateBwrap). The unpacked one is never put on PATH: a `bwrap` on PATH changes how Codex's
// adapter, run as root, sandboxes its own commands.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';

/** The unpacked bubblewrap in Ultraplan's cache, or undefined when it is not there. */
export function privateBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  // The user's own home (from the password database): a process started with another HOME (a
  // test's, an agent login's) still finds what the user's setup unpacked.
  const cache = env.ULTRAPLAN_CACHE || path.join(userInfo().homedir, '.cache', 'ultraplan');
  const bwrap = path.join(cache, 'tools', 'bubblewrap', 'usr', 'bin', 'bwrap');
  return existsSync(bwrap) ? bwrap : undefined;
}

/** A program of that name in a folder of PATH (absolute folders only). */
export function programOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The bubblewrap a sandbox runs: PATH's, else the private one; undefined when there is none. */
export function findBubblewrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return programOnPath('bwrap', env) ?? privateBwrap(env);
}
