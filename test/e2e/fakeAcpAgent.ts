// The scripted fake ACP agent (test/fixtures/fake-acp-agent) as the e2e and in-host suites use it:
// its record file (one JSON entry a line, appended as it goes) and, in the extension host, its
// command line.
import { accessSync, constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import * as path from 'node:path';

/** The entries of the fake agent's record so far (none before it wrote any). */
export function readAgentRecord<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

/** A node binary for the fake agent: ours, unless this host is Electron (then node on PATH). */
function nodeBinary(): string {
  if (!process.versions.electron) return process.execPath;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error('no node on PATH to run the fake ACP agent');
}

/**
 * The repository this code was built from. In the extension host the suites run from the test
 * runner's bundle, linked into code-server's extensions folder from the repository (the Ultraplan
 * extension itself is installed from its .vsix, which holds no test fixtures).
 */
function repoRoot(): string {
  for (let dir = realpathSync(__dirname); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'ultraplan') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no ultraplan repository above ${__dirname}`);
  }
}

/** The fake agent's argv from an in-host suite: `scenario` (a file under its scenarios/), recording to `record`. */
export function fakeAgentCommand(scenario: string, record: string): string[] {
  const fixtures = path.join(repoRoot(), 'test', 'fixtures', 'fake-acp-agent');
  return [nodeBinary(), path.join(fixtures, 'fake-acp-agent.mjs'), path.join(fixtures, 'scenarios', scenario), record];
}
