import { notesPrompt } from '../../src/core/approvalNotes';
import { bindingFor } from '../../src/core/decision';
import { SessionController } from '../../src/extension/sessions/sessionController';
import { anthropicApi } from '../support/modelApi/anthropic';
import { CLAUDE_ADAPTER, claudeEnv } from '../support/realAgents';
import { RealAgentRun, createRequest, until } from './realAgentKit';
import * as path from 'node:path';

const PLAN = '# Plan\n\n1. Read README.md.\n';
const NOTES = 'ZEBRA-NOTES';
describe('scratch mid-turn', function () {
  this.timeout(120_000);
  it('experiment', async () => {
    process.env.ULTRAPLAN_EXPERIMENT_MIDTURN = '1';
    const run = new RealAgentRun();
    const logs: string[] = [];
    await run.open({
      family: anthropicApi, argv: [CLAUDE_ADAPTER], label: 'Claude (ACP)', env: claudeEnv,
      agent: { log: (l: string) => logs.push(l) } as never,
      rounds: [
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: { plan: PLAN } }] }),
        () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(run.workspace, 'README.md') } }] }),
        () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(run.workspace, 'src', 'app.ts') } }] }),
        () => ({ text: 'round4 text' }),
        () => ({ text: 'round5 text' }),
        () => ({ text: 'round6 text' }),
      ],
    });
    const session = await run.backend.createSession(createRequest('Read the readme'));
    const c = new SessionController({ backend: run.backend, log: { trace() {}, info() {}, warn() {}, error() {}, show() {} },
      notifier: { say() {}, showReview() {}, openExternal() {}, isReviewShowing: () => true, askPermission: async () => {} },
      pollIntervalMs: 50, timeoutMs: 90_000, onDidChange: () => undefined,
      fresh: { key: 'k', sessionId: session.id, title: 't', demo: false } });
    c.start();
    await until(() => (c.canDecide ? true : undefined), 90_000, 'plan');
    await c.approveWithNotes(bindingFor(session.id, c.pendingPlan!.toolUseId, PLAN), NOTES);
    await new Promise((r) => setTimeout(r, 15000));
    for (const r of run.model.rounds) {
      const v = r.view!;
      console.log(`round ${r.round}: lastUser.text=${JSON.stringify(v.lastUser.text.slice(0, 300))} results=${JSON.stringify(v.lastUser.toolResults.map((t) => [t.name, t.content.slice(0, 80)]))} notesAnywhere=${v.allText.includes(NOTES)}`);
    }
    console.log(run.events(session.id).filter((e) => e.type === 'result').map((e) => JSON.stringify(e)).join('\n'));
    console.log(logs.filter((l) => /EXPERIMENT|turn|prompt/i.test(l)).join('\n'));
    c.dispose(); await c.settled(); await run.close();
    void notesPrompt;
  });
});
