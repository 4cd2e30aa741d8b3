// The one parse of a batch, where it leaves the transport: as deep as what is read, counted, and
// never repeated downstream.
import * as assert from 'node:assert/strict';
import { parseEventBatch } from '../../src/core/eventBatch';
import * as protocol from '../../src/core/protocol';
import { SessionModel } from '../../src/core/sessionModel';
import { TEST_IDENTITY, assistantText, exitPlan, toolResult, toolUse, toolRequest } from '../support/sessionEvents';
import { countSchemaPasses } from '../support/schemaPasses';

describe('event batch (the one parse)', () => {
  it('validates a batch once, at the transport: the scanner, the tracker and the model parse nothing again', () => {
    // Every schema the protocol exports, counted.
    const calls = countSchemaPasses([protocol]);
    try {
      const raw = [
        assistantText('hi'),
        exitPlan('toolu_1', '# P'),
        toolRequest('req_1', 'toolu_1', 'ExitPlanMode'),
        toolRequest('req_2', 'b-1', 'Bash', { command: 'ls' }),
        { type: 'result', subtype: 'success' },
        { type: 'env_manager_log' },
        { nope: 1 },
      ];
      const batch = parseEventBatch(raw);
      // With their schema: the ExitPlanMode call, two control_requests, the result. Routing fields by hand.
      assert.equal(calls.n, 4);
      const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
      model.scanner.ingestParsed(batch);
      model.reduce({ type: 'poll', poll: { batch, status: 'requires_action', cursor: 'c1' }, at: 1 });
      assert.equal(calls.n, 4, 'nothing downstream of the transport parses again');
      assert.equal(model.state.permissions.length, 0, 'the result ended the turn that asked');
      assert.equal(model.state.pendingPlan?.toolUseId, 'toolu_1');
      assert.equal(batch.malformed, 1);
    } finally {
      calls.restore();
    }
  });

  it('keeps events in order, skips types nobody reads, counts the malformed', () => {
    const batch = parseEventBatch([
      { type: 'system', subtype: 'init' },
      assistantText('a'),
      null,
      { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', name: 'ExitPlanMode', input: {} }] } },
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', content: 'no id' }] } },
      { type: 'stream_event' },
      toolUse('R', 'Read', 7),
      toolResult('R', 42),
    ]);
    assert.equal(batch.size, 8);
    assert.equal(batch.malformed, 3);
    assert.deepEqual(
      batch.events.map((e) => e.type),
      ['assistant', 'assistant', 'user'],
      'other tools are routed by id only',
    );
  });
});
