// In-host: the extension's deactivate() (a window closing, a reload) leaves the embedded sessions'
// agents planning in the local session service: they outlive the window. Starts an embedded
// session with the fake ACP agent itself (unless the calling e2e suite already configured one),
// checks the agents are running, calls the real deactivate of the loaded extension module, then
// checks each agent pid still runs.
// Runs last in its window: afterwards the extension is deactivated.
import * as assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isAlive } from '../../support/processes';
import { fakeAgentCommand, readAgentRecord } from '../../support/fakeAcpAgent';
import { waitFor } from '../../support/wait';

const EXTENSION_ID = 'ultraplan.ultraplan';

interface RecordEntry {
  kind: string;
  pid?: number;
  message?: { method?: string };
}

const readRecord = (file: string): RecordEntry[] => readAgentRecord<RecordEntry>(file);

describe('extension deactivate leaves the embedded ACP agents planning in the session service', function () {
  this.timeout(90_000);

  it('keeps every agent process the service started running', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    await extension.activate();
    const config = vscode.workspace.getConfiguration('ultraplan');

    // The calling suite's fake agent (its record file is the command's last argument), else our own.
    let command = config.get<string[]>('agent.command') ?? [];
    let record = command.find((arg) => arg.endsWith('.jsonl'));
    if (config.get('agent.choice') !== 'custom' || !record) {
      record = path.join(mkdtempSync(path.join(os.tmpdir(), 'ultraplan-deactivate-')), 'record.jsonl');
      command = fakeAgentCommand('claude-plan.json', record);
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
      { timeoutMs: 30_000, intervalMs: 200, message: 'the agent of the new session to start' },
    );
    await planning;
    await waitFor(
      () => (readRecord(recordFile).filter((e) => e.message?.method === 'session/prompt').length > startedBefore ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 200, message: 'the new agent to receive its prompt' },
    );
    const pids = readRecord(recordFile).flatMap((e) => (e.kind === 'started' && typeof e.pid === 'number' ? [e.pid] : []));
    const running = pids.filter(isAlive);
    assert.ok(running.length >= 1, `an agent runs before deactivate (recorded pids ${pids.join(', ')})`);

    // The very module the extension host loaded (same path, same require cache): its real deactivate.
    const main = path.join(extension.extensionPath, (extension.packageJSON as { main: string }).main);

    const loaded = require(main) as { deactivate?: () => Promise<void> };
    assert.equal(typeof loaded.deactivate, 'function', `${main} exports deactivate`);
    await loaded.deactivate!();

    // A moment for anything deactivate might have set off to end them.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const gone = running.filter((pid) => !isAlive(pid));
    assert.deepEqual(gone, [], `agent pids ended by deactivate: ${gone.join(', ')}`);
  });
});
