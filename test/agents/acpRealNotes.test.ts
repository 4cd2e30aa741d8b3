// Approve with notes through real agents (Claude's ACP adapter 0.101.0, Gemini CLI 0.61.0): the
// followed session (the real FollowedSession) on the real SessionHost and InProcessBackend, only
// the model scripted. The model's request log is the agent's record. Claude: the ExitPlanMode
// approval as a tool_result with the notes beside it, before the execution. Gemini: the approval,
// then, once the approved turn has ended, the notes as the next prompt.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { notesPrompt } from '../../src/core/approvalNotes';
import { bindingFor } from '../../src/core/decision';
import type { FollowedSession } from '../../src/extension/sessions/followedSession';
import { followSession } from '../support/followedSession';
import { anthropicApi } from '../support/modelApi/anthropic';
import { geminiApi } from '../support/modelApi/gemini';
import { CLAUDE_ADAPTER, claudeEnv, geminiArgv, geminiEnv, geminiPlansDir } from '../support/realAgents';
import { createRequest, eachRealAgentRun } from './realAgentKit';
import { waitFor } from '../support/wait';

const PLAN = '# Plan: flip the flag\n\n1. Set `original` to false in src/app.ts.\n';
const NOTES = 'Keep `original` exported under the same name.';
const EDITED_STEP = '2. Add a comment above it saying why.';

async function stopFollowing(controller: FollowedSession | undefined): Promise<void> {
  controller?.dispose();
  await controller?.settled();
}

describe('approve with notes through the real Claude ACP adapter, with only the model scripted', function () {
  this.timeout(120_000);
  let controller: FollowedSession | undefined;
  // Defined before the run's own hooks: the controller stops following before the agent closes.
  afterEach(() => stopFollowing(controller).then(() => (controller = undefined)));
  const run = eachRealAgentRun();

  /**
   * Claude proposes PLAN with ExitPlanMode, reads src/app.ts once approved, then answers with
   * `finalText` of what its last request holds: the session, followed, with the plan to decide.
   */
  async function planWithClaude(finalText: (allText: string) => string): Promise<{ sessionId: string; c: FollowedSession }> {
    await run.open({
      family: anthropicApi,
      argv: [CLAUDE_ADAPTER],
      label: 'Claude (ACP)',
      env: claudeEnv,
      rounds: [
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: { plan: PLAN } }] }),
        () => ({ toolCalls: [{ name: 'Read', input: { file_path: path.join(run.workspace, 'src', 'app.ts') } }] }),
        (view) => ({ text: finalText(view.allText) }),
      ],
    });
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    controller = followSession(run.backend, session.id);
    const c = controller;
    await waitFor(() => c.canDecide, { message: 'the plan to decide', timeoutMs: 90_000 });
    return { sessionId: session.id, c };
  }

  /**
   * The model's request that carries `text`: the one with ExitPlanMode's approval or, at the latest,
   * the next (the tool result of the first step), marked by Claude Code as sent while it worked.
   */
  async function joinedRound(text: string, what: string): Promise<void> {
    const approvalRound = await run.model.waitFor(
      () => run.model.rounds.find((r) => r.view?.lastUser.toolResults.some((t) => t.name === 'ExitPlanMode')),
      60_000,
      'the ExitPlanMode tool_result',
    );
    const approval = approvalRound.view?.lastUser.toolResults.find((t) => t.name === 'ExitPlanMode');
    assert.equal(approval?.isError, false);
    assert.match(approval?.content ?? '', /approved/i);
    const carrying = run.model.rounds.find((r) => r.view?.lastUser.text.includes(text));
    assert.ok(carrying, `no request carried ${what}: ${run.model.describe()}`);
    assert.ok(
      (carrying.round ?? 0) - (approvalRound.round ?? 0) <= 1 && (carrying.round ?? 0) >= (approvalRound.round ?? 0),
      `${what} came in round ${carrying.round}, the approval in round ${approvalRound.round}`,
    );
    assert.match(carrying.view?.lastUser.text ?? '', /The user sent a new message while you were working/);
  }

  it("the notes join the approved turn: the model's next request carries the ExitPlanMode approval and the notes; one result", async () => {
    const { sessionId, c } = await planWithClaude((text) =>
      text.includes(NOTES) ? 'Executed the plan; the name stays.' : 'No notes reached me.',
    );
    assert.equal(c.pendingPlan?.plan, PLAN);
    assert.deepEqual(await c.decisions.approveWithNotes(bindingFor(sessionId, c.pendingPlan!.toolUseId, PLAN), NOTES), { sent: true });

    // The model's record: the request after ExitPlanMode carries its approval (a tool_result, not an
    // error) and, in that same request (as seen here every time) or at the latest the next one, the
    // notes. Either way the model has them before it finishes the plan (its final answer depends on them).
    await joinedRound(notesPrompt(NOTES), 'the notes');

    // The session's record: the approval, then the notes message; one turn, one result, ended normally.
    const results = await waitFor(() => run.turnEnds(sessionId), {
      message: 'the turn to end',
      timeoutMs: 60_000,
      until: (ended) => ended.length >= 1,
    });
    const events = run.events(sessionId);
    const decisionAt = events.findIndex((e) => e.type === 'control_response');
    const notesAt = events.findIndex(
      (e) => e.type === 'user' && (e as { message?: { content?: unknown } }).message?.content === notesPrompt(NOTES),
    );
    assert.ok(decisionAt >= 0 && notesAt > decisionAt, 'control_response, then the notes as a user message');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(run.turnEnds(sessionId), [['end_turn', 'Executed the plan; the name stays.']]);
    assert.equal(results.length, 1);
    const revision = c.snapshot.panel.revisions[0];
    assert.equal(revision?.notes, NOTES);
    assert.equal(revision?.status, 'approved');
    assert.deepEqual(run.model.scenario.overruns, []);
  });
  it("an edited plan joins the approved turn too: the model reads the reviewer's version before it carries anything out", async () => {
    const { sessionId, c } = await planWithClaude((text) =>
      text.includes(EDITED_STEP) ? 'Executed the edited plan.' : 'Executed the plan as proposed.',
    );
    const edited = `${PLAN}${EDITED_STEP}\n`;
    assert.deepEqual(await c.decisions.approveEdited(bindingFor(sessionId, c.pendingPlan!.toolUseId, PLAN), edited), { sent: true });

    // The reviewer's version reaches the model inside the approved turn, never after it.
    await joinedRound('The reviewer edited the plan before approving it', 'the edited plan');
    assert.ok(
      run.model.rounds.some((r) => r.view?.lastUser.text.includes(EDITED_STEP)),
      'the edited step reached the model',
    );

    await waitFor(() => run.turnEnds(sessionId), {
      message: 'the turn to end',
      timeoutMs: 60_000,
      until: (ended) => ended.length >= 1,
    });
    await waitFor(async () => (await run.backend.getSession(sessionId)).session_status, {
      message: 'the session to be idle (nothing queued)',
      timeoutMs: 30_000,
      until: (status) => status === 'idle',
    });
    assert.deepEqual(run.turnEnds(sessionId), [['end_turn', 'Executed the edited plan.']]);
    assert.equal(c.snapshot.panel.revisions[0]?.status, 'approved_edited');
    assert.deepEqual(run.model.scenario.overruns, []);
  });
});

describe('approve with notes through the real Gemini CLI, with only the model scripted', function () {
  this.timeout(180_000);
  let controller: FollowedSession | undefined;

  before(() => {
    geminiArgv();
  });
  afterEach(() => stopFollowing(controller).then(() => (controller = undefined)));
  const run = eachRealAgentRun();

  it('the approved turn goes on to its end; then the notes are the next prompt, and the model answers them', async () => {
    await run.open({
      family: geminiApi,
      argv: geminiArgv(),
      label: 'Gemini CLI (ACP)',
      env: geminiEnv,
      rounds: [
        (view) => ({
          toolCalls: [{ name: 'write_file', input: { file_path: path.join(geminiPlansDir(view), 'flip.md'), content: PLAN } }],
        }),
        () => ({ toolCalls: [{ name: 'exit_plan_mode', input: { plan_filename: 'flip.md' } }] }),
        () => ({ text: 'Executed the approved plan.' }),
        (view) => ({ text: view.lastUser.text.includes(NOTES) ? 'Noted: the name stays.' : 'No notes reached me.' }),
      ],
    });
    const session = await run.backend.createSession(createRequest('Flip the flag in src/app.ts'));
    controller = followSession(run.backend, session.id, 150_000);
    const c = controller;
    await waitFor(() => c.canDecide, { message: 'the plan to decide', timeoutMs: 150_000 });
    assert.equal(c.pendingPlan?.plan.trimEnd(), PLAN.trimEnd());
    assert.deepEqual(await c.decisions.approveWithNotes(bindingFor(session.id, c.pendingPlan!.toolUseId, c.pendingPlan!.plan), NOTES), {
      sent: true,
    });

    const notesRound = await run.model.waitFor(
      () => run.model.rounds.find((r) => r.view?.lastUser.text.includes(notesPrompt(NOTES))),
      90_000,
      'a model request carrying the notes',
    );
    // The approval reached the model first, as exit_plan_mode's result, in the approved turn.
    const approvalRound = run.model.rounds.find((r) => r.view?.lastUser.toolResults.some((t) => t.name === 'exit_plan_mode' && !t.isError));
    assert.ok(approvalRound, `no exit_plan_mode result in the model's log: ${run.model.describe()}`);
    assert.ok((approvalRound.round ?? 0) < (notesRound.round ?? 0), 'the approval first, then the notes');
    assert.deepEqual(notesRound.view?.lastUser.toolResults, [], 'the notes are a prompt of their own');
    const results = await waitFor(() => run.turnEnds(session.id), {
      message: 'the notes turn to end',
      timeoutMs: 60_000,
      until: (ended) => ended.length >= 2,
    });
    assert.deepEqual(
      results.map(([, result]) => result),
      ['Executed the approved plan.', 'Noted: the name stays.'],
    );
    assert.equal(c.snapshot.panel.revisions[0]?.notes, NOTES);
    assert.deepEqual(run.model.scenario.overruns, []);
  });
});
