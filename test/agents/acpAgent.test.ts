// AcpAgent against the scripted fake ACP agent, a real child process speaking newline JSON-RPC.
import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { AcpAgent, CONTINUE_PLANNING_PROMPT } from '../../src/agents/acp/acpAgent';
import type { AcpAgentOptions } from '../../src/agents/acp/acpAgentOptions';
import { teleportDenyMessage, contentText } from '../../src/core/protocol';
import { readAgentRecord, received, waitForRecord, permissionOutcomes } from '../support/fakeAcpAgent';
import { FakeAgentRuns, RecordingContext } from '../support/recordingAgentContext';
import { isAlive, waitGone } from '../support/processes';
import { ORIGINAL_APP } from '../support/acpFixtures';

describe('AcpAgent with the fake ACP agent', function () {
  // Above the sum of a test's own bounded waits (8 s each, each failing with what it waited for):
  // beside the e2e run, a test here once took 30 s where it takes 0.3 s alone.
  this.timeout(60_000);
  const runs = new FakeAgentRuns();
  const startAgent = (scenario: string | object, options: Partial<AcpAgentOptions> = {}, prompt = 'Plan a greeting feature') =>
    runs.start(scenario, options, prompt);

  afterEach(() => runs.stopAll());

  describe("Claude's adapter shape", () => {
    it('switches to plan mode, coalesces chunks, translates tool calls, and turns the exit request into an ExitPlanMode review', async () => {
      const { ctx, run } = await startAgent('claude-plan.json');
      const request = await ctx.waitForPlanRequest();
      assert.equal(request.plan, '# Add a greeting\n\n1. Write greet()\n2. Test it');
      assert.equal(ctx.status, 'requires_action');

      const texts = ctx.events
        .filter((event) => event.type === 'assistant')
        .flatMap(
          (event) => (event as unknown as { message: { content: Array<{ type: string; text?: string; name?: string }> } }).message.content,
        );
      // Two chunks became one text; the text before the exit request was flushed before it.
      assert.deepEqual(
        texts.filter((block) => block.type === 'text').map((block) => block.text),
        ["I'll look around the project first.", 'Here is my plan.'],
      );
      const toolUses = texts.filter((block) => block.type === 'tool_use').map((block) => block.name);
      assert.deepEqual(toolUses, ['Read README.md', 'Ready to code?', 'ExitPlanMode']);
      assert.deepEqual(contentText(ctx.toolResult('read-1')?.content), '# Demo project');

      const init = ctx.systemEvents('init')[0];
      assert.equal(init?.permissionMode, 'plan');
      assert.equal(init?.cwd, run.workspace);

      const record = readAgentRecord(run.record);
      const [initialize] = received(record, 'initialize');
      assert.equal(initialize?.params.protocolVersion, 1);
      assert.deepEqual((initialize?.params.clientCapabilities as { terminal: boolean }).terminal, false);
      const [sessionNew] = received(record, 'session/new');
      assert.equal(sessionNew?.params.cwd, run.workspace);
      assert.deepEqual(sessionNew?.params.mcpServers, []);
      assert.equal(received(record, 'session/set_mode')[0]?.params.modeId, 'plan');
      const started = record.find((entry) => entry.kind === 'started');
      assert.equal(started?.cwd, run.workspace);
    });

    it('Approve selects "manually approve edits" by default and records an approved tool_result', async () => {
      const { agent, ctx, run } = await startAgent('claude-plan.json');
      const request = await ctx.waitForPlanRequest();
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: { plan: request.plan } });
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const result = ctx.toolResult(request.toolUseId);
      assert.equal(result?.is_error, false);
      assert.match(contentText(result?.content), /## Approved Plan:\n# Add a greeting/);
      assert.equal(ctx.results()[0]?.subtype, 'success');
      assert.equal(ctx.status, 'idle');
      const record = readAgentRecord(run.record);
      assert.deepEqual(permissionOutcomes(record), ['default']);
      // Leaving plan mode after our approval is expected, not reported.
      assert.equal(ctx.systemEvents('acp_plan_mode_left').length, 0);
    });

    it('Approve with afterApproval acceptEdits selects the auto-accept option, never the bypass one', async () => {
      const { agent, ctx, run } = await startAgent('claude-plan.json', { afterApproval: 'acceptEdits' });
      const request = await ctx.waitForPlanRequest();
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: { plan: request.plan } });
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const record = readAgentRecord(run.record);
      assert.deepEqual(permissionOutcomes(record), ['acceptEdits']);
    });

    it("Claude 0.101's options: acceptEdits approves manually, then switches the session to acceptEdits", async () => {
      const { agent, ctx, run } = await startAgent('claude-0101-plan.json', { afterApproval: 'acceptEdits' });
      const request = await ctx.waitForPlanRequest();
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: { plan: request.plan } });
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const record = readAgentRecord(run.record);
      assert.deepEqual(permissionOutcomes(record), ['exit-plan-default']);
      assert.deepEqual(
        received(record, 'session/set_mode').map((message) => message.params.modeId),
        ['plan', 'acceptEdits'],
      );
    });

    it('an edited plan is approved with the edited marker and sent to the agent as the next prompt', async () => {
      const { agent, ctx, run } = await startAgent('claude-plan.json');
      const request = await ctx.waitForPlanRequest();
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: { plan: '# Edited plan' } });
      const prompts = await waitForRecord(run.record, 'prompt', 2);
      assert.match(contentText(ctx.toolResult(request.toolUseId)?.content), /## Approved Plan \(edited by user\):\n# Edited plan/);
      assert.match(String(prompts[1]?.text), /# Edited plan/);
      // Executing now: the agent's next permission request goes to the reviewer as itself, not as a plan.
      await ctx.waitFor(
        () =>
          ctx.events.some((event) => event.type === 'control_request' && JSON.stringify(event).includes('"tool_name":"Ready to code?"')),
        8000,
        'a plain tool permission request',
      );
      assert.equal(ctx.status, 'requires_action');
    });

    it('Reject selects "keep planning", then the feedback reaches the agent as the next prompt, and the revised plan comes back', async () => {
      const { agent, ctx, run } = await startAgent('claude-plan.json');
      const first = await ctx.waitForPlanRequest();
      agent.onDecision(first.requestId, { behavior: 'deny', message: 'Please also handle an empty name.' });
      const result = ctx.toolResult(first.toolUseId);
      assert.equal(result?.is_error, true);
      assert.equal(contentText(result?.content), 'Please also handle an empty name.');

      const second = await ctx.waitForPlanRequest(1);
      assert.match(second.plan, /v2/);
      const record = readAgentRecord(run.record);
      assert.deepEqual(permissionOutcomes(record), ['plan']);
      const prompts = record.filter((entry) => entry.kind === 'prompt').map((entry) => String(entry.text));
      assert.equal(prompts.length, 2);
      assert.equal(prompts[0], 'Plan a greeting feature');
      assert.match(prompts[1] ?? '', /Please also handle an empty name\./);
      // Rejected with our approval still pending: plan mode was never left.
      assert.equal(ctx.systemEvents('acp_plan_mode_left').length, 0);

      agent.onDecision(second.requestId, { behavior: 'allow', updatedInput: { plan: second.plan } });
      await ctx.waitFor(() => ctx.results().length >= 2, 8000, 'second turn end');
      assert.match(contentText(ctx.toolResult(second.toolUseId)?.content), /## Approved Plan:\n# Add a greeting \(v2\)/);
    });

    it('Teleport rejects and cancels the turn', async () => {
      const { agent, ctx, run } = await startAgent('claude-plan.json');
      const request = await ctx.waitForPlanRequest();
      agent.onDecision(request.requestId, { behavior: 'deny', message: teleportDenyMessage(request.plan) });
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const record = readAgentRecord(run.record);
      assert.deepEqual(permissionOutcomes(record), ['plan']);
      assert.equal(received(record, 'session/cancel').length, 1);
      assert.deepEqual(
        record.filter((entry) => entry.kind === 'turn_end').map((entry) => entry.stopReason),
        ['cancelled'],
      );
      // No feedback prompt follows a teleport.
      assert.equal(record.filter((entry) => entry.kind === 'prompt').length, 1);
      assert.equal(ctx.toolResult(request.toolUseId)?.is_error, true);
      assert.equal(ctx.status, 'idle');
    });

    it('a repeated decision for an answered request is ignored', async () => {
      const { agent, ctx, run } = await startAgent('claude-plan.json');
      const request = await ctx.waitForPlanRequest();
      agent.onDecision(request.requestId, { behavior: 'deny', message: 'no' });
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: {} });
      await ctx.waitForPlanRequest(1);
      const record = readAgentRecord(run.record);
      assert.deepEqual(permissionOutcomes(record), ['plan']);
    });
  });

  describe('other agent shapes', () => {
    it("Gemini's shape: the plan comes from the file the agent wrote and names; Allow is the manual approval", async () => {
      const { agent, ctx, run } = await startAgent('gemini-plan-file.json');
      const request = await ctx.waitForPlanRequest();
      assert.equal(request.plan, '# Greeting plan\n\n- add greet()\n- document it\n');
      assert.equal(await readFile(path.join(run.workspace, 'plans', 'greeting-plan.md'), 'utf8'), request.plan);
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: { plan: request.plan } });
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const record = readAgentRecord(run.record);
      assert.deepEqual(permissionOutcomes(record), ['proceed_once']);
      assert.deepEqual(
        record.filter((entry) => entry.kind === 'write_outcome').map((entry) => entry.ok),
        [true],
      );
    });

    it('an agent we do not know asking "Implement this plan?" with rawInput.plan (an older Codex adapter\'s shape): plan mode found by name', async () => {
      const { agent, ctx, run } = await startAgent('codex-plan.json');
      const request = await ctx.waitForPlanRequest();
      assert.equal(request.plan, '1. Add greet()\n2. Add a test');
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: { plan: request.plan } });
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const record = readAgentRecord(run.record);
      assert.equal(received(record, 'session/set_mode')[0]?.params.modeId, 'codex-plan');
      assert.deepEqual(permissionOutcomes(record), ['approved']);
    });

    it('an option missing for afterApproval is an error naming what the agent offered, not a guess', async () => {
      const { agent, ctx, run } = await startAgent('codex-plan.json', { afterApproval: 'acceptEdits' });
      const request = await ctx.waitForPlanRequest();
      agent.onDecision(request.requestId, { behavior: 'allow', updatedInput: { plan: request.plan } });
      const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 8000, 'error result');
      assert.equal(result?.subtype, 'error_during_execution');
      assert.match(result?.result ?? '', /auto-accepts edits.*"Yes, implement this plan" \(approved, allow_once\)/s);
      // No allow option was selected on the reviewer's behalf.
      const record = readAgentRecord(run.record);
      assert.ok(!permissionOutcomes(record).includes('approved'));
      assert.ok(!record.some((entry) => entry.kind === 'received' && JSON.stringify(entry.message).includes('"optionId":"approved"')));
    });

    it('an elicitation-style review (Approve / Keep planning) is handled like a permission request; feedback goes in its free text', async () => {
      const { agent, ctx, run } = await startAgent('elicitation-review.json');
      const request = await ctx.waitForPlanRequest();
      assert.equal(request.plan, '# Elicited plan\n\n1. One step');
      agent.onDecision(request.requestId, { behavior: 'deny', message: 'Split the step in two.' });
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const record = readAgentRecord(run.record);
      const response = record.find((entry) => entry.kind === 'elicitation_response')?.response as {
        action: string;
        content: Record<string, string>;
      };
      assert.deepEqual(response, { action: 'accept', content: { decision: 'keep_planning', feedback: 'Split the step in two.' } });
      assert.equal(ctx.toolResult(request.toolUseId)?.is_error, true);
    });

    it('a turn that ends without a plan is a question: result success, idle; the answer starts the next turn', async () => {
      const { agent, ctx, run } = await startAgent('question.json');
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'question turn end');
      assert.equal(ctx.results()[0]?.subtype, 'success');
      assert.equal(ctx.results()[0]?.result, 'Which database should I use: Postgres or SQLite?');
      await ctx.waitFor(() => ctx.status === 'idle', 2000, 'idle');
      agent.onUserMessage('SQLite, please.');
      const request = await ctx.waitForPlanRequest();
      assert.equal(request.plan, 'Use SQLite.');
      const prompts = readAgentRecord(run.record)
        .filter((entry) => entry.kind === 'prompt')
        .map((entry) => entry.text);
      assert.deepEqual(prompts, ['Plan a greeting feature', 'SQLite, please.']);
    });
  });

  describe('read-only while planning', () => {
    it('refuses writes, terminals and edit permissions with a clear message to the agent, logs each, and allows looking', async () => {
      const { ctx, run } = await startAgent('write-while-planning.json');
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const record = readAgentRecord(run.record);
      const writes = record.filter((entry) => entry.kind === 'write_outcome');
      assert.equal(writes[0]?.ok, false);
      assert.match(String(writes[0]?.message), /refused to write .*src\/app\.ts: this session is planning/);
      // The plan file may be written.
      assert.equal(writes[1]?.ok, true);
      assert.equal(await readFile(path.join(run.workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP);
      assert.equal(await readFile(path.join(run.workspace, 'PLAN.md'), 'utf8'), '# The plan\n');
      const terminal = record.find((entry) => entry.kind === 'terminal_outcome');
      assert.equal(terminal?.ok, false);
      assert.match(String(terminal?.message), /refused terminal\/create/);
      assert.deepEqual(permissionOutcomes(record), ['reject', 'allow']);
      const read = record.find((entry) => entry.kind === 'read_outcome');
      assert.equal(read?.content, ORIGINAL_APP);

      const refusals = ctx.systemEvents('acp_refused').map((event) => String(event.message));
      assert.equal(refusals.length, 3);
      assert.match(refusals[0] ?? '', /src\/app\.ts/);
      assert.match(refusals[1] ?? '', /terminal\/create/);
      assert.match(refusals[2] ?? '', /"Edit src\/app\.ts" \(edit\)/);
      assert.equal(ctx.logs.filter((line) => line.includes('] Ultraplan refused')).length, 3);
      // The turn ended on refusals without a plan: the agent is asked once to go on planning, and the log says so.
      assert.equal(ctx.systemEvents('acp_continue_planning').length, 1);
      await waitForRecord(run.record, 'prompt', 2);
      const prompts = readAgentRecord(run.record)
        .filter((entry) => entry.kind === 'prompt')
        .map((entry) => String(entry.text));
      assert.equal(prompts[1], CONTINUE_PLANNING_PROMPT);
    });

    it('an agent leaving plan mode on its own is reported, switched back, and stays read-only', async () => {
      const { agent, ctx, run } = await startAgent('leave-plan-mode.json');
      await ctx.waitFor(() => ctx.results().length > 0, 8000, 'turn end');
      const reports = ctx.systemEvents('acp_plan_mode_left');
      assert.deepEqual(
        reports.map((event) => event.mode),
        ['acceptEdits', 'default'],
      );
      assert.match(String(reports[0]?.message), /left plan mode on its own \(now "acceptEdits"\) without your approval/);
      const record = readAgentRecord(run.record);
      assert.deepEqual(
        received(record, 'session/set_mode').map((message) => message.params.modeId),
        ['plan', 'plan', 'plan'],
      );
      assert.equal(record.find((entry) => entry.kind === 'write_outcome')?.ok, false);
      assert.equal(await readFile(path.join(run.workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP);
      assert.equal(agent.mode, 'plan');
      // Each mode the agent reported is in the session's events, still held read-only.
      assert.deepEqual(
        ctx.systemEvents('ultraplan_agent_mode').map((event) => [(event.mode as { id: string }).id, event.read_only]),
        [
          ['plan', true],
          ['acceptEdits', true],
          ['plan', true],
          ['default', true],
          ['plan', true],
        ],
      );
    });
  });

  describe('failures', () => {
    it('a crash mid-turn ends with error_during_execution, the exit code and the stderr tail; no process is left', async () => {
      const { agent, ctx } = await startAgent('crash.json');
      const pid = agent.pid;
      const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 8000, 'error result');
      assert.equal(result?.subtype, 'error_during_execution');
      assert.equal(result?.is_error, true);
      assert.match(result?.result ?? '', /Fake \(ACP\) exited with code 3 unexpectedly/);
      assert.match(result?.result ?? '', /fatal: the model backend went away/);
      // The text before the crash is kept.
      assert.ok(ctx.events.some((event) => event.type === 'assistant' && JSON.stringify(event).includes('Starting')));
      assert.equal(ctx.status, 'idle');
      assert.ok(pid !== undefined && (await waitGone(pid)));
    });

    it('a malformed line ends with a readable error quoting it', async () => {
      const { agent, ctx } = await startAgent('malformed.json');
      const pid = agent.pid;
      const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 8000, 'error result');
      assert.equal(result?.subtype, 'error_during_execution');
      assert.match(result?.result ?? '', /not JSON-RPC.*"Debug: loaded 3 tools/);
      assert.ok(pid !== undefined && (await waitGone(pid)));
    });

    it('a refused session/new ends with its message and the stderr tail', async () => {
      const { ctx } = await startAgent('session-new-error.json');
      const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 8000, 'error result');
      assert.equal(result?.subtype, 'error_during_execution');
      assert.match(result?.result ?? '', /refused session\/new.*Authentication required/);
      assert.match(result?.result ?? '', /not logged in/);
    });

    it('no plan mode: fails naming the agent and the modes it offers', async () => {
      const { ctx, run } = await startAgent('no-plan-mode.json');
      const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 8000, 'error result');
      assert.match(result?.result ?? '', /Fake \(ACP\) has no plan mode.*Modes it offers: default \("Default"\), yolo \("YOLO"\)/s);
      const record = readAgentRecord(run.record);
      assert.equal(received(record, 'session/prompt').length, 0);
    });

    it('a command that does not exist fails with a clear message', async () => {
      const ctx = new RecordingContext();
      const agent = new AcpAgent({ argv: ['/nonexistent/ultraplan-agent'], cwd: process.cwd(), label: 'Missing (ACP)' });
      runs.track(agent);
      await agent.start(ctx, 'plan');
      const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 8000, 'error result');
      assert.match(result?.result ?? '', /Could not start Missing \(ACP\) \(\/nonexistent\/ultraplan-agent\): ENOENT/);
    });

    it('a prompt with no first event within the bound ends with a clear message; the agent and its children are gone', async () => {
      const { agent, ctx, run } = await startAgent('hang.json', { firstEventTimeoutMs: 800 });
      const pid = agent.pid;
      const [result] = await ctx.waitFor(() => (ctx.results().length ? ctx.results() : undefined), 8000, 'timeout result');
      assert.equal(result?.subtype, 'error_during_execution');
      assert.match(result?.result ?? '', /sent nothing for 1 s after the prompt.*cannot reach/s);
      assert.match(result?.result ?? '', /retrying the model request/);
      assert.ok(pid !== undefined && (await waitGone(pid)));
      const grandchild = readAgentRecord(run.record).find((entry) => entry.kind === 'grandchild')?.pid as number | undefined;
      assert.ok(grandchild !== undefined, 'the fake started a grandchild');
      assert.ok(await waitGone(grandchild), `grandchild ${grandchild} left behind`);
    });
  });

  describe('stopping', () => {
    it('stop() cancels the turn and ends the process group: no orphans', async () => {
      const { agent, ctx, run } = await startAgent('cancelled.json');
      await ctx.waitFor(
        () => ctx.events.some((event) => event.type === 'system' && (event as { subtype?: string }).subtype === 'init'),
        8000,
        'init',
      );
      const grandchild = (await waitForRecord(run.record, 'grandchild'))[0]?.pid as number;
      assert.ok(isAlive(grandchild));
      const pid = agent.pid;
      await agent.stop();
      assert.ok(pid !== undefined && (await waitGone(pid)), 'agent left behind');
      assert.ok(await waitGone(grandchild), 'grandchild left behind');
      const record = readAgentRecord(run.record);
      assert.equal(received(record, 'session/cancel').length, 1);
      // stop() is idempotent.
      await agent.stop();
    });

    it('aborting the context (archive) stops the agent', async () => {
      const { agent, ctx, run } = await startAgent('cancelled.json');
      const [grandchild] = await waitForRecord(run.record, 'grandchild');
      const pid = agent.pid;
      ctx.abort();
      assert.ok(pid !== undefined && (await waitGone(pid)), 'agent left behind');
      assert.ok(await waitGone(grandchild?.pid as number), 'grandchild left behind');
    });
  });
});
