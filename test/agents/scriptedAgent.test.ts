import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  ULTRAPLAN_TELEPORT_SENTINEL,
  controlResponseEvent,
  teleportDenyMessage,
  userMessageEvent,
} from '../../src/core/protocol';
import { ScenarioError, loadScenarioFile, parseScenario } from '../../src/agents/catalogue/scenario';
import { fillWords, taskFromPrompt } from '../../src/agents/scripted/scriptedAgent';
import { runServerCli, startServer, tempDir, type ServerProcess } from '../support/serverProcess';
import { EXAMPLES, assistantTexts, example, pendingPlanRequest, toolResults, types } from '../service/hostTestKit';
import { allEvents, call, createSession, waitForEvents, waitForStatus } from '../service/server/serverTestKit';
import { waitFor } from '../support/wait';

const planRequests = (events: any[]) => events.filter((e) => e.type === 'control_request' && e.request.subtype === 'can_use_tool').length;

function problems(value: unknown): string[] {
  try {
    parseScenario(value);
  } catch (err) {
    assert.ok(err instanceof ScenarioError, String(err));
    return err.problems;
  }
  assert.fail('the scenario was accepted');
}

describe('scenario files', () => {
  it('every example in examples/ validates', async () => {
    const files = (await fs.readdir(EXAMPLES)).filter((f) => f.endsWith('.json'));
    assert.ok(files.includes('demo.json'));
    for (const file of files) {
      const scenario = await loadScenarioFile(path.join(EXAMPLES, file));
      assert.ok(scenario.steps.length > 0, file);
    }
  });

  it('names the step index and the problem for each bad step', () => {
    assert.deepEqual(problems({ steps: [{ say: 'ok' }, { shout: 'x' }] }), [
      'steps[1]: unknown step; a step has exactly one of "say", "tool", "ask", "plan", "fail", "sleep" (keys: shout)',
    ]);
    assert.deepEqual(problems({ steps: [{ say: 'x', ask: 'y' }] }), [
      'steps[0]: a step has exactly one of say/tool/ask/plan/fail/sleep, this one has say and ask',
    ]);
    assert.match(problems({ steps: [{ fail: 'oops' }] })[0]!, /^steps\[0\] \(fail\)\.fail: /);
    assert.match(problems({ steps: [{ sleep: -5 }] })[0]!, /^steps\[0\] \(sleep\)\.sleep: /);
    assert.match(problems({ steps: [{ say: 'x', delay: 3 }] })[0]!, /^steps\[0\] \(say\).*delay/);
    assert.match(problems({ steps: [{ tool: 'Read', input: {} }] })[0]!, /^steps\[0\] \(tool\)\.result: /);
    assert.deepEqual(problems({ steps: [{ tool: 'ExitPlanMode', result: 'x' }] }), [
      'steps[0] (tool): use a "plan" step to call ExitPlanMode',
    ]);
    assert.deepEqual(problems({ steps: [{ say: 'x' }], onApprove: [{ plan: 'again' }] }), [
      'onApprove[0] (plan): not allowed in onApprove; it may hold say, tool, sleep, fail',
    ]);
    assert.deepEqual(problems({ steps: [] }), ['steps: steps needs at least one step']);
    assert.match(problems({ steps: [{ say: 'x' }], extra: true })[0]!, /extra/);
    assert.deepEqual(problems([1, 2]).length, 1);
    // Every bad step is reported, not just the first.
    assert.equal(problems({ steps: [{ nope: 1 }, { say: '' }, 'text'] }).length, 3);
  });

  it('a file that is missing or not JSON is refused with its name', async () => {
    const dir = tempDir();
    const bad = path.join(dir, 'bad.json');
    await fs.writeFile(bad, '{"steps": [');
    await assert.rejects(
      loadScenarioFile(bad),
      (err: Error) => err instanceof ScenarioError && err.message.includes(bad) && /not valid JSON/.test(err.message),
    );
    await assert.rejects(loadScenarioFile(path.join(dir, 'none.json')), /ENOENT/);
  });

  it('the server refuses to start on an invalid scenario, naming the step', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'broken.json');
    await fs.writeFile(file, JSON.stringify({ steps: [{ say: 'hi' }, { plan: 'x' }, { fail: 'because' }] }));
    const run = await runServerCli(['--port', '0', '--data-dir', dir, '--agent', `scripted:${file}`], {
      env: { ULTRAPLAN_SERVER_TOKEN: 't' },
    });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /steps\[2\] \(fail\)\.fail/);
    assert.equal(run.stdout, '');
  });
});

describe('ScriptedAgent behind the real server', function () {
  this.timeout(30_000);
  const servers: ServerProcess[] = [];
  const serve = async (scenario: string) => {
    const server = await startServer({ scenario: example(scenario) });
    servers.push(server);
    return server;
  };
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  const decide = async (server: ServerProcess, id: string, decision: Parameters<typeof controlResponseEvent>[1]) => {
    const pending = pendingPlanRequest(await allEvents(server, id));
    const answer = await call(server, 'POST', `/v1/sessions/${id}/events`, { events: [controlResponseEvent(pending.requestId, decision)] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return pending;
  };

  it('approve edited: the tool_result carries the edited marker and the edited plan, then onApprove runs', async () => {
    const server = await serve('approve.json');
    const id = await createSession(server);
    await waitForStatus(server, id, 'requires_action');
    const edited = '# Plan\n\n1. Add a CHANGELOG.md with a 0.1.0 entry.\n';
    const pending = await decide(server, id, { behavior: 'allow', updatedInput: { plan: edited } });
    await waitForStatus(server, id, 'idle');
    const events = await allEvents(server, id);
    const [result] = toolResults(events, pending.toolUseId);
    assert.ok(result && !result.isError);
    assert.ok(result.text.endsWith(`${APPROVED_PLAN_EDITED_MARKER}${edited}`), result.text);
    assert.ok(!result.text.includes(APPROVED_PLAN_MARKER));
    const tail = types(events.slice(events.findIndex((e) => e.type === 'control_response')));
    assert.deepEqual(tail, ['control_response', 'user', 'assistant', 'user', 'assistant', 'result:success']);
    assert.equal(assistantTexts(events).at(-1), 'Done.');
  });

  it('reject: the feedback reaches the agent as an error tool_result, it revises, and the revision can be approved', async () => {
    const server = await serve('revise.json');
    const id = await createSession(server);
    await waitForStatus(server, id, 'requires_action');
    const feedback = 'Do not rewrite the parser; fix the tokenizer.\n\nLine 1: too broad';
    const first = await decide(server, id, { behavior: 'deny', message: feedback });
    let events = await waitForEvents(server, id, (e) => planRequests(e) === 2);
    await waitForStatus(server, id, 'requires_action');
    assert.deepEqual(
      toolResults(events, first.toolUseId),
      [{ text: feedback, isError: true }],
      'the reviewer’s words, verbatim, in the agent’s log',
    );
    const second = pendingPlanRequest(events);
    assert.notEqual(second.requestId, first.requestId);
    assert.match(second.plan, /Plan v2/);
    assert.ok(assistantTexts(events).includes('Revising the plan with your feedback.'));
    await decide(server, id, { behavior: 'allow', updatedInput: { plan: second.plan } });
    await waitForStatus(server, id, 'idle');
    events = await allEvents(server, id);
    assert.ok(toolResults(events, second.toolUseId)[0]?.text.includes(`${APPROVED_PLAN_MARKER}${second.plan}`));
    assert.equal(assistantTexts(events).at(-1), 'Executing plan v2.');
  });

  it('teleport: a deny carrying the sentinel ends the work; the session goes idle without executing', async () => {
    const server = await serve('approve.json');
    const id = await createSession(server);
    await waitForStatus(server, id, 'requires_action');
    const pending = pendingPlanRequest(await allEvents(server, id));
    await decide(server, id, { behavior: 'deny', message: teleportDenyMessage(pending.plan) });
    await waitForStatus(server, id, 'idle');
    const events = await waitFor(async () => allEvents(server, id), {
      message: "the turn's result after the teleport",
      until: (seen) => types(seen).at(-1) === 'result:success',
    });
    const [result] = toolResults(events, pending.toolUseId);
    assert.ok(result?.isError && result.text.startsWith(`${ULTRAPLAN_TELEPORT_SENTINEL}\n`));
    assert.equal(types(events).at(-1), 'result:success');
    assert.ok(!assistantTexts(events).includes('Done.'), 'onApprove did not run');
    assert.equal(events.filter((e) => e.type === 'control_request').length, 2, 'the set-mode request and one plan, no new plan');
  });

  it('question: the turn ends idle with the question; a reply resumes it and the plan follows', async () => {
    const server = await serve('question.json');
    const id = await createSession(server);
    await waitForStatus(server, id, 'idle');
    let events = await allEvents(server, id);
    assert.equal(assistantTexts(events).at(-1), 'Should the new build target Node 20 or Node 22?');
    assert.equal(types(events).at(-1), 'result:success');
    const reply = await call(server, 'POST', `/v1/sessions/${id}/events`, { events: [userMessageEvent('Node 20, please.')] });
    assert.equal(reply.status, 200);
    await waitForStatus(server, id, 'requires_action');
    events = await allEvents(server, id);
    const replyIndex = events.findIndex((e) => e.type === 'user' && e.message.content === 'Node 20, please.');
    assert.ok(replyIndex > 0, 'the reply is in the log');
    assert.match(pendingPlanRequest(events.slice(replyIndex)).plan, /Target Node 20/);
  });

  it('fail: a result with the error subtype ends the session idle; later messages get a note, not a plan', async () => {
    const server = await serve('fail.json');
    const id = await createSession(server);
    await waitForStatus(server, id, 'idle');
    let events = await allEvents(server, id);
    const last = events.at(-1);
    assert.equal(last.type, 'result');
    assert.equal(last.subtype, 'error_during_execution');
    assert.equal(last.is_error, true);
    assert.deepEqual(last.errors, ['The scripted agent could not read the repository.']);
    const before = events.length;
    await call(server, 'POST', `/v1/sessions/${id}/events`, { events: [userMessageEvent('try again')] });
    // The note comes after the message, however long a loaded machine takes to write it.
    events = await waitForEvents(server, id, (all) => all.slice(before).some((e) => e.type === 'result'));
    assert.match(assistantTexts(events.slice(before)).at(-1) ?? '', /scenario has ended/);
    assert.ok(!events.some((e) => e.type === 'control_request' && e.request.subtype === 'can_use_tool'));
  });

  it('the demo scenario runs through question, plan, rejection-driven revision and approval', async () => {
    const server = await serve('demo.json');
    const id = await createSession(server, 'Add rate limiting to the public API');
    await waitForStatus(server, id, 'idle');
    assert.equal(
      (await call(server, 'POST', `/v1/sessions/${id}/events`, { events: [userMessageEvent('Per API key; add an in-memory fallback.')] }))
        .status,
      200,
    );
    await waitForStatus(server, id, 'requires_action');
    const first = await decide(server, id, { behavior: 'deny', message: 'Needs the in-memory fallback and a configurable limit.' });
    const events = await waitForEvents(server, id, (e) => planRequests(e) === 2);
    await waitForStatus(server, id, 'requires_action');
    const second = pendingPlanRequest(events);
    assert.notEqual(second.toolUseId, first.toolUseId);
    assert.match(second.plan, /revision 2/);
    // Its revisions take the person's words in: the reply in both plans, the feedback quoted in the second.
    assert.match(first.plan, /as you answered: Per API key; add an in-memory fallback\./);
    assert.doesNotMatch(first.plan, /Needs the in-memory fallback/);
    assert.match(second.plan, /\n> Needs the in-memory fallback and a configurable limit\.\n/);
    assert.match(second.plan, /as you answered: Per API key; add an in-memory fallback\./);
    assert.match(assistantTexts(events).join('\n'), /I take that in: "Per API key; add an in-memory fallback\."/);
    // The demo plans the task it was given, in the prompt's words, and says it is a script.
    assert.match(first.plan, /^# Plan \(demo\): Add rate limiting to the public API\n/);
    assert.match(first.plan, /Scripted demo/);
    assert.match(assistantTexts(events)[0] ?? '', /scripted demo, not a model: it plans "Add rate limiting to the public API"/);
    await decide(server, id, { behavior: 'allow', updatedInput: { plan: second.plan } });
    await waitForStatus(server, id, 'idle');
    const final = await allEvents(server, id);
    assert.equal(
      assistantTexts(final).at(-1),
      'Demo: the plan is approved. A real agent would now carry it out; the demo changes nothing.',
    );
    const tools = final.flatMap((e) =>
      e.type === 'assistant' ? e.message.content.filter((b: { type: string }) => b.type === 'tool_use') : [],
    );
    for (const tool of tools.filter((t: { name: string }) => t.name !== 'ExitPlanMode')) {
      assert.equal(toolResults(final, tool.id).length, 1, `tool ${tool.name} has its result`);
    }
  });
});

describe("taskFromPrompt: the task the demo plans, in the prompt's words", () => {
  it('takes the first non-empty line, spaces collapsed, without a closing full stop', () => {
    assert.equal(
      taskFromPrompt('\n  Add   a dark theme to the settings page.\n\n(From src/ui.ts:3-9.)'),
      'Add a dark theme to the settings page',
    );
  });

  it('cuts a long line at a word boundary and marks the cut', () => {
    const prompt = `Migrate ${'the billing module '.repeat(10)}to the new API`;
    const task = taskFromPrompt(prompt);
    assert.ok(task.length <= 101, task);
    assert.ok(task.endsWith('…'), task);
    assert.ok(prompt.startsWith(`${task.slice(0, -1)} `), `cut inside a word: ${task}`);
  });

  it('is empty for an empty prompt (the demo then says "the task")', () => {
    assert.equal(taskFromPrompt('  \n '), '');
  });
});

describe("fillWords: the person's words in a scripted step", () => {
  const words = {
    task: 'Add a *bold* `flag`',
    reply: 'Keep it <small>',
    feedback: 'No.\n\nComments on specific plan lines:\n\nOn plan line 3:\n> 2. Make it\n\n# not a heading',
  };

  it('puts the words in a plan as literal Markdown: escaped, the feedback as a block quote', () => {
    const plan = fillWords('# {{task}}\n\n{{feedback}}\n\n1. As you said: {{reply}}', words, true);
    assert.equal(
      plan,
      '# Add a \\*bold\\* \\`flag\\`\n\n> No.\n>\n> Comments on specific plan lines:\n>\n> On plan line 3:\n> 2. Make it\n>\n> \\# not a heading\n\n1. As you said: Keep it \\<small\\>',
    );
  });

  it('leaves spoken text as the person wrote it, and names what is missing', () => {
    assert.equal(fillWords('{{task}} / {{reply}}', words, false), 'Add a *bold* `flag` / Keep it <small>');
    assert.equal(
      fillWords('{{task}} / {{reply}} / {{feedback}} / {{other}}', { task: '', reply: '', feedback: '' }, false),
      'the task / no reply given / no feedback given / {{other}}',
    );
  });
});
