import { strict as assert } from 'node:assert';
import { SessionsError } from '../../src/core/errors';
import { controlResponseEvent, setPlanModeEvent, userMessageEvent } from '../../src/core/protocol';
import { parseClientEvent, parseCreationEvents } from '../../src/service/host/incomingEvents';

function refused(run: () => unknown, message: RegExp): void {
  assert.throws(run, (err: unknown) => err instanceof SessionsError && err.status === 400 && message.test(err.message));
}

describe('client events: only what the agent receives', () => {
  it('takes text user messages (string or text blocks) and decisions on append', () => {
    const blocks = {
      type: 'user',
      message: {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    };
    assert.deepEqual(parseClientEvent(blocks, 'e', 'append'), { kind: 'user', event: blocks, text: 'a\nb' });
    const decision = parseClientEvent(controlResponseEvent('req_1', { behavior: 'deny', message: 'no' }), 'e', 'append');
    assert.equal(decision.kind, 'decision');
    assert.equal(decision.kind === 'decision' && decision.requestId, 'req_1');
  });

  it('refuses blank messages, error responses, non-text blocks, and control_requests on append', () => {
    refused(() => parseClientEvent(userMessageEvent('   '), 'events[0]', 'append'), /^events\[0\]: a user message needs text; expected /);
    refused(
      () => parseClientEvent({ type: 'control_response', response: { subtype: 'error', request_id: 'r', error: 'x' } }, 'e', 'append'),
      /must be a success/,
    );
    refused(() => parseClientEvent(setPlanModeEvent('set-mode-1'), 'e', 'append'), /come from the agent/);
    refused(() => parseClientEvent([userMessageEvent('x')], 'e', 'append'), /an event is a JSON object/);
    refused(
      () => parseClientEvent({ type: 'user', message: { role: 'user', content: [{ type: 'document', source: {} }] } }, 'e', 'append'),
      /text only/,
    );
  });

  it('on creation: one prompt, at most one switch to plan mode and nothing else, never another mode', () => {
    const { prompt, events } = parseCreationEvents([setPlanModeEvent('set-mode-1'), userMessageEvent('Plan it')]);
    assert.equal(prompt, 'Plan it');
    assert.deepEqual(
      events.map((e) => e.kind),
      ['set_mode', 'user'],
    );
    refused(
      () =>
        parseCreationEvents([
          { ...setPlanModeEvent('m'), request: { subtype: 'set_permission_mode', mode: 'bypassPermissions' } },
          userMessageEvent('x'),
        ]),
      /switch to plan mode/,
    );
    refused(
      () => parseCreationEvents([setPlanModeEvent('a'), setPlanModeEvent('b'), userMessageEvent('x')]),
      /at most one switch to plan mode, got 1 and 2/,
    );
    refused(
      () => parseCreationEvents([controlResponseEvent('r', { behavior: 'deny', message: 'x' }), userMessageEvent('x')]),
      /events\[0\]\.data: the agent receives no "control_response" event here/,
    );
    refused(() => parseCreationEvents([{ type: 'event', data: userMessageEvent('x') }]), /wraps each event once/);
  });
});
