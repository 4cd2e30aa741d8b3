// In-host: the extension's deactivate() closes the embedded session host, and with it every ACP
// agent process it started. Starts an embedded session with the fake ACP agent itself (unless the
// calling e2e suite already configured one), checks the agents are running, calls the real
// deactivate of the loaded extension module, then checks each agent pid is gone.
// Runs last in its window: afterwards the extension is deactivated.
import * as assert from 'node:assert/strict';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isAlive } from '../../support/processes';

const EXTENSION_ID = 'ultraplan.ultraplan';

interface RecordEntry {
  kind: string;
  pid?: number;
  message?: { method?: string };
}

function readRecord(file: string): RecordEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as RecordEntry);
}

async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
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

describe('extension deactivate ends the embedded ACP agents', function () {
  this.timeout(90_000);

  it('stops every agent process the embedded host started', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    await extension.activate();
    const config = vscode.workspace.getConfiguration('ultraplan');

    // The calling suite's fake agent (its record file is the command's last argument), else our own.
    let command = config.get<string[]>('agent.command') ?? [];
    let record = command.find((arg) => arg.endsWith('.jsonl'));
    if (config.get('agent.choice') !== 'custom' || !record) {
      const fixtures = path.join(extension.extensionPath, 'test', 'fixtures', 'fake-acp-agent');
      record = path.join(mkdtempSync(path.join(os.tmpdir(), 'ultraplan-deactivate-')), 'record.jsonl');
      command = [nodeBinary(), path.join(fixtures, 'fake-acp-agent.mjs'), path.join(fixtures, 'scenarios', 'claude-plan.json'), record];
      await config.update('backend', 'embedded', vscode.ConfigurationTarget.Global);
      await config.update('agent.command', command, vscode.ConfigurationTarget.Global);
      await config.update('agent.choice', 'custom', vscode.ConfigurationTarget.Global);
    }
    const recordFile = record;

    // One more session, so an agent is surely running mid-plan (besides any idle ones).
    const startedBefore = readRecord(recordFile).filter((e) => e.kind === 'started').length;
    const planning = vscode.commands.executeCommand('ultraplan.planTask', 'plan a greeting (deactivate check)');
    // Accept the prefilled prompt as a person pressing Enter would.
    await waitFor(
      async () => {
        await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
        return readRecord(recordFile).filter((e) => e.kind === 'started').length > startedBefore ? true : undefined;
      },
      30_000,
      'the agent of the new session to start',
    );
    await planning;
    await waitFor(
      () => (readRecord(recordFile).filter((e) => e.message?.method === 'session/prompt').length > startedBefore ? true : undefined),
      30_000,
      'the new agent to receive its prompt',
    );
    const pids = readRecord(recordFile).flatMap((e) => (e.kind === 'started' && typeof e.pid === 'number' ? [e.pid] : []));
    const running = pids.filter(isAlive);
    assert.ok(running.length >= 1, `an agent runs before deactivate (recorded pids ${pids.join(', ')})`);

    // The very module the extension host loaded (same path, same require cache): its real deactivate.
    const main = path.join(extension.extensionPath, (extension.packageJSON as { main: string }).main);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require(main) as { deactivate?: () => Promise<void> };
    assert.equal(typeof loaded.deactivate, 'function', `${main} exports deactivate`);
    await loaded.deactivate!();

    // deactivate resolves after the host closed, which waits for each agent's process group.
    const left = running.filter(isAlive);
    assert.deepEqual(left, [], `agent pids still running after deactivate: ${left.join(', ')}`);
  });
});
