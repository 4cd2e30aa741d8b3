// Claude's real ACP adapter (@agentclientprotocol/claude-agent-acp 0.101.0) planning through the
// real SessionHost, with only the model scripted (the Anthropic Messages API on 127.0.0.1). What
// the model "does" is what Claude Code's tools allow in each round; what it was sent is asserted
// from the request log.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { anthropicApi } from '../support/modelApi/anthropic';
import { assistantTexts } from '../service/hostTestKit';
import { parseEventBatch } from '../../src/core/eventBatch';
import { agentModeText } from '../../src/core/inbox';
import { SessionModel } from '../../src/core/sessionModel';
import { TEST_IDENTITY } from '../support/sessionEvents';
import type { ScenarioRound } from '../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile } from '../support/realAgents';
import {
  ORIGINAL_APP,
  PLAN_V1,
  RealAgentRun,
  createRequest,
  crashMidTurn,
  eachRealAgentRun,
  executeAllowing,
  failingModel,
  planUntilApproved,
  planUntilFailed,
  type RealAgentSetup,
} from './realAgentKit';

const FEEDBACK = 'Also say why in a comment.';
const UPDATED_APP = '// Flipped: the original behaviour is retired.\nexport const original = false;\n';

/** Every mode the session's events reported, in order, and the model's reading of the whole log. */
function reportedModes(run: RealAgentRun, sessionId: string) {
  const events = run.events(sessionId);
  const modes = events.flatMap((event) => parseEventBatch([event]).agentMode ?? []);
  const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
  model.reduce({ type: 'poll', poll: { batch: parseEventBatch(events), status: 'idle', cursor: null }, at: 1 });
  return { modes, text: agentModeText(model.state.agentMode) };
}

function claudeSetup(run: RealAgentRun, rounds: ScenarioRound[], agent: RealAgentSetup['agent'] = {}): RealAgentSetup {
  return { family: anthropicApi, rounds, argv: [CLAUDE_ADAPTER], label: 'Claude (ACP)', env: claudeEnv, agent };
}

describe('the real Claude ACP adapter, with only the model scripted', function () {
  this.timeout(120_000);
  const run = eachRealAgentRun();

  it('plans read-only in plan mode, asks a question, takes the reject feedback into revision 2, and after approval edits with permission', async () => {
    const app = () => path.join(run.workspace, 'src', 'app.ts');
    let planFile = '';
    await run.open(
      claudeSetup(run, [
        () => ({ toolCalls: [{ name: 'Read', input: { file_path: app() } }] }),
        () => ({ toolCalls: [{ name: 'Write', input: { file_path: app(), content: 'export const original = false;\n' } }] }),
        () => ({
          toolCalls: [
            {
              name: 'AskUserQuestion',
              input: {
                questions: [
                  {
                    question: 'Which file should change?',
                    header: 'File',
                    multiSelect: false,
                    options: [
                      { label: 'src/app.ts', description: 'the app' },
                      { label: 'README.md', description: 'the readme' },
                    ],
                  },
                ],
              },
            },
          ],
        }),
        (view) => {
          planFile = claudePlanFile(view);
          return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN_V1 } }] };
        },
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
        (view) => ({
          toolCalls: [
            {
              name: 'Write',
              input: {
                file_path: planFile,
                content: `${PLAN_V1}2. ${view.lastUser.text.includes(FEEDBACK) ? 'Add a comment saying why.' : 'No feedback reached me.'}\n`,
              },
            },
          ],
        }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
        () => ({ toolCalls: [{ name: 'Write', input: { file_path: app(), content: UPDATED_APP } }] }),
        () => ({ text: 'Done: src/app.ts flipped.' }),
      ]),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    const { approved, plans, questions } = await planUntilApproved(run, session.id, {
      decisions: [{ behavior: 'deny', message: FEEDBACK }, { behavior: 'allow' }],
      answers: ['src/app.ts'],
      timeoutMs: 90_000,
    });

    // Plan mode was in force before the first prompt: the very first model call was told so.
    const [first] = run.model.rounds;
    assert.match(first?.view?.allText ?? '', /Plan mode is active/);
    assert.equal(run.systemEvents(session.id, 'init')[0]?.permissionMode, 'plan');
    // Claude Code's own notices are logged as such, never as the model's words.
    assert.ok(!assistantTexts(run.events(session.id)).some((text) => text.includes('**Warning:**')));

    // The write while planning was refused: the model heard it, the file is untouched.
    const afterWrite = run.model.rounds[2]?.view?.lastUser.toolResults[0];
    assert.equal(afterWrite?.isError, true, JSON.stringify(afterWrite));
    assert.ok(run.systemEvents(session.id, 'acp_refused').some((event) => String(event.message).includes('Write')));

    // The question reached the person; their answer reached the model.
    assert.deepEqual(questions, ['Which file?\n- src/app.ts\n- README.md'.replace('Which file?', 'Which file should change?')]);
    assert.match(run.model.rounds[3]?.view?.lastUser.toolResults[0]?.content ?? '', /src\/app\.ts/);

    // The real plan text, from the file the model wrote; the reject's feedback reached the model.
    assert.equal(plans[0], PLAN_V1);
    // Claude's reject ends the turn `cancelled`; the feedback went as the next prompt.
    assert.ok(run.turnEnds(session.id).some(([stopReason]) => stopReason === 'cancelled'));
    assert.match(run.model.rounds[6]?.view?.lastUser.text ?? '', new RegExp(FEEDBACK.replace('.', '\\.')));
    // The adapter trims the plan file's text.
    assert.equal(plans[1]?.trimEnd(), `${PLAN_V1}2. Add a comment saying why.`);
    assert.equal(approved.plan.trimEnd(), plans[1]?.trimEnd());
    assert.equal(approved.rejectCount, 1);
    assert.equal(await run.app(), ORIGINAL_APP, 'nothing written while planning');

    // Approve (ultraplan.afterApproval = default): manual edits, so the edit asks and lands once allowed.
    const { result, asked } = await executeAllowing(run, session.id, approved, 60_000);
    assert.equal(result.isError, false);
    assert.equal(result.result, 'Done: src/app.ts flipped.');
    assert.equal(asked.length, 1);
    assert.match(asked[0]?.toolName ?? '', /Write/);
    assert.equal(await run.app(), UPDATED_APP);
    assert.equal(run.agent.mode, 'default');
    assert.deepEqual(run.model.scenario.overruns, []);
  });

  it('a plan passed inline (no plan file) is shown as proposed; approve with acceptEdits lets the edit land without asking', async () => {
    const inline = '# Inline plan\n\n1. Flip the flag.\n';
    await run.open(
      claudeSetup(
        run,
        [
          () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(run.workspace, 'src', 'app.ts') } }] }),
          () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
          () => ({ toolCalls: [{ name: 'ExitPlanMode', input: { plan: inline } }] }),
          () => ({ toolCalls: [{ name: 'Write', input: { file_path: path.join(run.workspace, 'src', 'app.ts'), content: UPDATED_APP } }] }),
          () => ({ text: 'Done.' }),
        ],
        { afterApproval: 'acceptEdits' },
      ),
    );
    const session = await run.backend.createSession(createRequest('Flip the flag'));
    const { approved, plans } = await planUntilApproved(run, session.id, { decisions: [{ behavior: 'allow' }], timeoutMs: 90_000 });
    assert.deepEqual(plans, [inline]);
    const { result, asked } = await executeAllowing(run, session.id, approved, 60_000);
    assert.equal(result.isError, false);
    assert.deepEqual(asked, [], 'acceptEdits: no permission asked for the edit');
    assert.equal(await run.app(), UPDATED_APP);
    assert.equal(run.agent.mode, 'acceptEdits');
    // Each mode the adapter reported reached the session's events: plan mode (held read-only)
    // while planning, then the mode approval switched to, no longer held read-only.
    const { modes, text } = reportedModes(run, session.id);
    assert.deepEqual(modes, [
      { id: 'plan' }, // the init event
      { id: 'plan', name: 'Plan', readOnly: true },
      { id: 'plan', name: 'Plan', readOnly: false }, // approved: no longer held read-only
      { id: 'default', name: 'Manual', readOnly: false }, // the adapter's own switch on approval
      { id: 'acceptEdits', name: 'Accept edits', readOnly: false }, // ultraplan.afterApproval
    ]);
    assert.equal(text, 'acceptEdits "Accept edits"');
  });

  it('a model that only answers errors (the adapter retries on its own) ends at the first-event bound with a clear message', async () => {
    await run.open(claudeSetup(run, failingModel(), { firstEventTimeoutMs: 8000 }));
    const result = await planUntilFailed(run, 60_000);
    assert.match(result.result ?? '', /Claude \(ACP\) sent nothing for 8 s after the prompt\. It may be retrying a model it cannot reach/);
    assert.ok(run.model.rounds.length >= 1, 'the adapter did call the model');
  });

  it('a crash mid-turn ends the session with a clear message and leaves no process', async () => {
    await run.open(claudeSetup(run, [() => ({ hang: true })]));
    assert.match(await crashMidTurn(run, 60_000), /Claude \(ACP\) was killed by SIGKILL unexpectedly/);
  });
});
