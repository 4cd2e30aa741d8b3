// The tool permission tracker: which can_use_tool requests (other than ExitPlanMode) a person still
// has to answer, fed the same event batches as the scanner.
import { strict as assert } from 'node:assert';
import { DecisionGate } from '../../src/core/decision';
import {
  PERMISSION_DENIED_MESSAGE,
  ToolPermissionTracker,
  describeToolInput,
  inertNotificationText,
  permissionPromptText,
  permissionRefusalMessage,
  permissionResponseEvent,
  summarizeToolInput,
} from '../../src/core/permissionRequests';
import { ControlResponseEventSchema } from '../../src/core/protocol';
import { assistantText, canUseTool, exitPlan, result, toolResult, toolUse } from '../support/sessionEvents';

function ask(requestId: string, toolUseId: string, toolName: string, input: unknown) {
  return {
    type: 'control_request',
    request_id: requestId,
    request: { subtype: 'can_use_tool', tool_name: toolName, input, tool_use_id: toolUseId },
  };
}

const edit = (requestId = 'r1', toolUseId = 't1') =>
  ask(requestId, toolUseId, 'Edit', { file_path: '/w/src/app.ts', old_string: 'a', new_string: 'b' });

describe('ToolPermissionTracker', () => {
  it('opens a can_use_tool request for an edit with its tool, tool_use id, summary and input', () => {
    const tracker = new ToolPermissionTracker();
    const changes = tracker.ingest([toolUse('t1', 'Edit', {}), edit()]);
    assert.equal(changes.opened.length, 1);
    assert.deepEqual(changes.closed, []);
    const [request] = tracker.open;
    assert.equal(request?.requestId, 'r1');
    assert.equal(request?.toolName, 'Edit');
    assert.equal(request?.toolUseId, 't1');
    assert.equal(request?.summary, '/w/src/app.ts');
    assert.deepEqual(request?.input, { file_path: '/w/src/app.ts', old_string: 'a', new_string: 'b' });
  });

  it('ignores ExitPlanMode requests (the plan review) and set_permission_mode requests', () => {
    const tracker = new ToolPermissionTracker();
    const changes = tracker.ingest([
      exitPlan('p1', 'the plan'),
      canUseTool('rp', 'p1', 'the plan'),
      { type: 'control_request', request_id: 'set-mode-1', request: { subtype: 'set_permission_mode', mode: 'plan' } },
    ]);
    assert.deepEqual(changes.opened, []);
    assert.deepEqual(tracker.open, []);
  });

  it('a request already open before the batch closes when we answer it; answering twice says it was not open', () => {
    const tracker = new ToolPermissionTracker();
    tracker.ingest([edit()]);
    assert.equal(tracker.markAnswered('r1'), true);
    assert.equal(tracker.isOpen('r1'), false);
    assert.equal(tracker.markAnswered('r1'), false);
    // A repeated delivery of the same request does not open it again.
    assert.deepEqual(tracker.ingest([edit()]).opened, []);
  });

  it('closes a request as answered elsewhere when its tool_result arrives (a later batch)', () => {
    const tracker = new ToolPermissionTracker();
    tracker.ingest([toolUse('t1', 'Edit', {}), edit()]);
    const changes = tracker.ingest([assistantText('working'), toolResult('t1', 'edited')]);
    assert.deepEqual(
      changes.closed.map((c) => [c.request.requestId, c.reason]),
      [['r1', 'answered_elsewhere']],
    );
    assert.deepEqual(tracker.open, []);
  });

  it('closes a request as answered elsewhere the moment the log shows its answer (another window), before its tool runs', () => {
    const tracker = new ToolPermissionTracker();
    tracker.ingest([toolUse('t1', 'Bash', { command: 'npm test' }), ask('r1', 't1', 'Bash', { command: 'npm test' }), edit('r2', 't2')]);
    const answer = permissionResponseEvent(tracker.open[0]!, 'allow');
    const changes = tracker.ingest([answer]);
    assert.deepEqual(
      changes.closed.map((c) => [c.request.requestId, c.reason]),
      [['r1', 'answered_elsewhere']],
    );
    assert.deepEqual(
      tracker.open.map((r) => r.requestId),
      ['r2'],
    );
    // Our own answer, recorded first, comes back through the log and changes nothing; neither does
    // an answer to no open request, or one without a request id.
    assert.equal(tracker.markAnswered('r2'), true);
    const again = tracker.ingest([
      permissionResponseEvent({ requestId: 'r2', input: {} }, 'deny'),
      { type: 'control_response', response: { subtype: 'success', request_id: 'nobody' } },
      { type: 'control_response', response: {} },
    ]);
    assert.deepEqual(again, { opened: [], closed: [] });
  });

  it('a request opened and answered in one batch is never shown', () => {
    const tracker = new ToolPermissionTracker();
    const changes = tracker.ingest([edit('r1', 't1'), { type: 'control_response', response: { subtype: 'success', request_id: 'r1' } }]);
    assert.deepEqual(changes, { opened: [], closed: [] });
    assert.equal(tracker.isOpen('r1'), false);
  });

  it('a tool_use stored before its request (the normal order) does not close it; one after it does', () => {
    const tracker = new ToolPermissionTracker();
    tracker.ingest([toolUse('t1', 'Bash', { command: 'npm test' }), ask('r2', 't1', 'Bash', { command: 'npm test' })]);
    assert.equal(tracker.isOpen('r2'), true);
    const changes = tracker.ingest([toolUse('t1', 'Bash', { command: 'npm test' })]);
    assert.deepEqual(
      changes.closed.map((c) => c.reason),
      ['answered_elsewhere'],
    );
  });

  it("closes every open request when the turn ends (result), whatever the result's subtype", () => {
    for (const subtype of ['success', 'error_during_execution']) {
      const tracker = new ToolPermissionTracker();
      tracker.ingest([edit('r1', 't1'), ask('r2', 't2', 'Bash', { command: 'ls' })]);
      const changes = tracker.ingest([result(subtype)]);
      assert.deepEqual(
        changes.closed.map((c) => [c.request.requestId, c.reason]),
        [
          ['r1', 'turn_ended'],
          ['r2', 'turn_ended'],
        ],
        subtype,
      );
      assert.deepEqual(tracker.open, []);
    }
  });

  it('a request opened and closed within one batch is reported neither opened nor closed (replaying a log)', () => {
    const tracker = new ToolPermissionTracker();
    const changes = tracker.ingest([
      toolUse('t1', 'Edit', {}),
      edit(),
      toolResult('t1', 'done'),
      ask('r2', 't2', 'Bash', { command: 'ls' }),
      result('success'),
      ask('r3', 't3', 'Read', { file_path: '/w/x' }),
    ]);
    assert.deepEqual(
      changes.opened.map((r) => r.requestId),
      ['r3'],
    );
    assert.deepEqual(changes.closed, []);
    assert.deepEqual(
      tracker.open.map((r) => r.requestId),
      ['r3'],
    );
  });

  it('a request whose tool already has a result (a page out of order) does not open', () => {
    const tracker = new ToolPermissionTracker();
    const changes = tracker.ingest([toolResult('t1', 'done'), edit()]);
    assert.deepEqual(changes.opened, []);
    assert.deepEqual(tracker.open, []);
  });

  it('skips malformed requests and other junk, counting the malformed can_use_tool ones', () => {
    const tracker = new ToolPermissionTracker();
    const changes = tracker.ingest([
      null,
      42,
      { type: 'env_manager_log' },
      { type: 'control_request', request_id: 'bad', request: { subtype: 'can_use_tool', tool_name: 'Edit', input: {} } },
      edit(),
    ]);
    assert.deepEqual(
      changes.opened.map((r) => r.requestId),
      ['r1'],
    );
    assert.equal(tracker.malformedCount, 1);
  });

  it('memory is bounded: open requests by maxOpen (oldest dropped and reported), remembered ids by maxRemembered', () => {
    const tracker = new ToolPermissionTracker({ maxOpen: 3, maxRemembered: 10 });
    const batch = Array.from({ length: 5 }, (_, i) => ask(`r${i}`, `t${i}`, 'Edit', { file_path: `/w/${i}` }));
    const changes = tracker.ingest(batch);
    assert.deepEqual(
      tracker.open.map((r) => r.requestId),
      ['r2', 'r3', 'r4'],
    );
    // The two dropped ones were opened in this batch, so they were never reported.
    assert.deepEqual(
      changes.opened.map((r) => r.requestId),
      ['r2', 'r3', 'r4'],
    );
    const later = tracker.ingest([ask('r9', 't9', 'Edit', {})]);
    assert.deepEqual(
      later.closed.map((c) => [c.request.requestId, c.reason]),
      [['r2', 'dropped']],
    );
    for (let i = 0; i < 500; i++) tracker.ingest([toolUse(`x${i}`, 'Read', {}), toolResult(`x${i}`, 'ok')]);
    assert.ok(tracker.rememberedCount <= 20, `remembered ${tracker.rememberedCount}`);
  });
});

describe('permission request texts and answers', () => {
  it('summarizes by file path, command (string or argv), else the start of the JSON, on one bounded line', () => {
    assert.equal(summarizeToolInput({ command: 'npm test\n  -- --grep x', description: 'run tests' }), 'npm test -- --grep x');
    assert.equal(summarizeToolInput({ command: ['git', 'push', '--force'] }), 'git push --force');
    assert.equal(summarizeToolInput({ file_path: '/w/a.ts', content: 'x'.repeat(10_000) }), '/w/a.ts');
    const long = summarizeToolInput({ thing: 'y'.repeat(2_000) });
    assert.equal(long.length, 500);
    assert.ok(long.startsWith('{"thing":"yyy'));
    assert.ok(long.endsWith('…'));
    assert.equal(summarizeToolInput(undefined), '');
  });

  it('details are pretty JSON, clipped with a note', () => {
    assert.equal(describeToolInput({ a: 1 }), '{\n  "a": 1\n}');
    const clipped = describeToolInput({ s: 'z'.repeat(100) }, 20);
    assert.match(clipped, /^\{\n {2}"s": "z{10}\n… \(clipped: \d+ more characters\)$/);
  });

  it('the prompt names the agent, the tool and what it acts on; links the agent planted are inert', () => {
    assert.equal(
      permissionPromptText('Claude (ACP)', { toolName: 'Bash', summary: 'npm test' }),
      'Ultraplan: Claude (ACP) asks permission: Bash npm test',
    );
    // Gemini CLI titles its tools with a phrase and sends an empty input: read as it stands, no "{}".
    assert.equal(
      permissionPromptText('Gemini CLI', { toolName: 'Writing to src/app.ts', summary: summarizeToolInput({}) }),
      'Ultraplan: Gemini CLI asks permission: Writing to src/app.ts',
    );
    // An ACP title already saying the target is not repeated.
    assert.equal(
      permissionPromptText('Fake', { toolName: 'Edit /w/src/app.ts', summary: '/w/src/app.ts' }),
      'Ultraplan: Fake asks permission: Edit /w/src/app.ts',
    );
    assert.equal(
      permissionPromptText('Fake', { toolName: 'Edit src/app.ts', summary: '/w/src/app.ts' }),
      'Ultraplan: Fake asks permission: Edit src/app.ts',
    );
    assert.equal(
      permissionPromptText('Fake', { toolName: 'Edit app.ts', summary: '/w/src/other.ts' }),
      'Ultraplan: Fake asks permission: Edit app.ts /w/src/other.ts',
    );
    const hostile = permissionPromptText('Fake', {
      toolName: 'Edit',
      summary: '[click](command:workbench.action.terminal.new) [x] (https://e.example)',
    });
    assert.doesNotMatch(hostile, /\]\(/);
    assert.equal(inertNotificationText('[a](command:x)'), '[a] (command:x)');
  });

  it('allow answers with the original input unchanged; deny with the fixed message; both valid control_responses', () => {
    const input = { file_path: '/w/a.ts', new_string: 'b' };
    const allow = permissionResponseEvent({ requestId: 'r1', input }, 'allow');
    const parsedAllow = ControlResponseEventSchema.parse(allow);
    assert.equal(parsedAllow.response.request_id, 'r1');
    assert.deepEqual(parsedAllow.response.response, { behavior: 'allow', updatedInput: input });
    const deny = ControlResponseEventSchema.parse(permissionResponseEvent({ requestId: 'r1', input }, 'deny'));
    assert.deepEqual(deny.response.response, { behavior: 'deny', message: PERMISSION_DENIED_MESSAGE });
    // An input that is not an object still gives a valid allow.
    assert.deepEqual(
      ControlResponseEventSchema.parse(permissionResponseEvent({ requestId: 'r2', input: 'ls' }, 'allow')).response.response,
      {
        behavior: 'allow',
        updatedInput: {},
      },
    );
  });

  it('the decision gate refuses a second answer with a permission-worded message', () => {
    const gate = new DecisionGate();
    const ref = { sessionId: 's', toolUseId: 'permission:r1', plan: '{"file_path":"/w/a.ts"}' };
    const binding = { sessionId: 's', toolUseId: ref.toolUseId, planHash: '0'.repeat(64) };
    // (a wrong hash is refused as changed)
    const changed = gate.claim(binding, ref, 's');
    assert.equal(changed.ok, false);
    assert.equal(
      !changed.ok && permissionRefusalMessage(changed.reason),
      'This permission request changed since it was shown; nothing was sent.',
    );
    const closed = gate.claim(binding, undefined, 's');
    assert.match(!closed.ok ? permissionRefusalMessage(closed.reason) : '', /no longer open/);
  });
});
