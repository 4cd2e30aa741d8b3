// The scripted fake ACP agent (test/fixtures/fake-acp-agent): newline JSON-RPC through the real
// spawn path, every behaviour from a scenario file. Its command line (from the repository, or from
// an in-host suite's bundle), a throwaway workspace to run it in, and its record (one JSON entry a
// line, appended as it goes), which tests read to see what the client sent it.
import { accessSync, constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ORIGINAL_APP } from './acpFixtures';
import { waitFor } from './wait';

/**
 * The repository this code runs from. In the extension host the suites run from the test runner's
 * bundle, linked into code-server's extensions folder from the repository (the Ultraplan extension
 * itself is installed from its .vsix, which holds no test fixtures).
 */
function repoRoot(): string {
  for (let dir = realpathSync(__dirname); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'ultraplan') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no ultraplan repository above ${__dirname}`);
  }
}

const FIXTURES = (): string => path.join(repoRoot(), 'test', 'fixtures', 'fake-acp-agent');

/** The fake agent program. */
export const fakeAgentProgram = (): string => path.join(FIXTURES(), 'fake-acp-agent.mjs');

/** A scenario file of its scenarios/ folder. */
export const fakeAgentScenario = (name: string): string => path.join(FIXTURES(), 'scenarios', name);

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

/** The fake agent's argv: `scenario` (a path, or a file under its scenarios/), recording to `record`. */
export function fakeAgentCommand(scenario: string, record: string): string[] {
  const file = path.isAbsolute(scenario) ? scenario : fakeAgentScenario(scenario);
  return [nodeBinary(), fakeAgentProgram(), file, record];
}

export interface FakeRun {
  workspace: string;
  /** The folder of the record, outside the workspace (a sandboxed agent's workspace is read-only while it plans). */
  recordDir: string;
  record: string;
  argv: string[];
  cleanup(): Promise<void>;
}

/** A temp workspace (a README and src/app.ts) and the fake agent's argv for `scenario` (a file name or the scenario itself). */
export async function fakeRun(scenario: string | object): Promise<FakeRun> {
  const workspace = await mkdtemp(path.join(tmpdir(), 'ultraplan-acp-'));
  await writeFile(path.join(workspace, 'README.md'), '# Demo project\n');
  await mkdir(path.join(workspace, 'src'));
  await writeFile(path.join(workspace, 'src', 'app.ts'), ORIGINAL_APP);
  let scenarioPath: string;
  if (typeof scenario === 'string') {
    scenarioPath = fakeAgentScenario(scenario);
  } else {
    scenarioPath = path.join(workspace, '.scenario.json');
    await writeFile(scenarioPath, JSON.stringify(scenario));
  }
  const recordDir = await mkdtemp(path.join(tmpdir(), 'ultraplan-acp-record-'));
  const record = path.join(recordDir, 'record.jsonl');
  return {
    workspace,
    recordDir,
    record,
    argv: fakeAgentCommand(scenarioPath, record),
    cleanup: async () => {
      await rm(workspace, { recursive: true, force: true });
      await rm(recordDir, { recursive: true, force: true });
    },
  };
}

export interface RecordEntry {
  kind: string;
  [key: string]: unknown;
}

/** The entries of the fake agent's record so far (none before it wrote any). */
export function readAgentRecord<T = RecordEntry>(file: string): T[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  // The fake appends while tests read: a line without its newline is still being written.
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

/** The JSON-RPC messages the fake agent received with this method. */
export function received(entries: RecordEntry[], method: string): Array<{ method: string; params: Record<string, unknown> }> {
  return entries
    .filter((entry) => entry.kind === 'received')
    .map((entry) => entry.message as { method?: string; params?: Record<string, unknown> })
    .filter((message) => message.method === method)
    .map((message) => ({ method: message.method as string, params: message.params ?? {} }));
}

/** The outcome of each permission the fake agent asked (the option chosen, or cancelled), in order. */
export function permissionOutcomes(entries: ReadonlyArray<{ kind: string; outcome?: unknown }>): unknown[] {
  return entries.filter((entry) => entry.kind === 'permission_outcome').map((entry) => entry.outcome);
}

/** Waits (bounded) for the fake's record to hold `count` entries of `kind`. */
export async function waitForRecord(file: string, kind: string, count = 1, timeoutMs = 8000): Promise<RecordEntry[]> {
  return waitFor(() => readAgentRecord(file).filter((entry) => entry.kind === kind), {
    message: `${count} "${kind}" entries in the fake agent's record`,
    timeoutMs,
    until: (entries) => entries.length >= count,
  });
}

/**
 * The window setting for the fake agent's tests: it appends its record (what it was sent, its pid,
 * which cleanup kills) to a file outside the workspace, and a sandbox shows it neither that file nor
 * the host's pids, so its local service runs unsandboxed.
 */
export const RECORD_OUTSIDE_SANDBOX = { 'ultraplan.localService.sandbox': 'off' } as const;
