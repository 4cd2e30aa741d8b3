// The current Sessions wire's pure helpers: id forms, the phase input, cursor order, create bodies.
import { strict as assert } from 'node:assert';
import {
  codeSessionStatus,
  sequenceAfter,
  toCodeCreateRequest,
  toCodeSessionId,
  toLinkSessionId,
  toSessionResource,
  toV1CreateRequest,
  withUuid,
} from '../../src/core/codeSessions';
import { setPlanModeEvent, userMessageEvent } from '../../src/core/protocol';

describe('current Sessions wire (pure)', () => {
  it('session_X and cse_X name one session; other ids pass unchanged', () => {
    assert.equal(toCodeSessionId('session_01abc'), 'cse_01abc');
    assert.equal(toCodeSessionId('cse_01abc'), 'cse_01abc');
    assert.equal(toLinkSessionId('cse_01abc'), 'session_01abc');
    assert.equal(toLinkSessionId('session_01abc'), 'session_01abc');
    assert.equal(toCodeSessionId('s1'), 's1');
  });

  it('the phase input: archived, else the worker status (idle when absent)', () => {
    assert.equal(codeSessionStatus({ status: 'archived', worker_status: 'running' }), 'archived');
    assert.equal(codeSessionStatus({ status: 'active', worker_status: 'requires_action' }), 'requires_action');
    assert.equal(codeSessionStatus({ status: 'active' }), 'idle');
    const resource = toSessionResource({ id: 'cse_1', title: null, status: 'active', worker_status: 'running', last_event_at: '2026-11-30T00:00:01Z', created_at: '2026-11-30T00:00:00Z' });
    assert.equal(resource.session_status, 'running');
    assert.equal(resource.updated_at, '2026-11-30T00:00:01Z');
    assert.equal(resource.title, '');
  });

  it('sequence numbers order as numbers, not text', () => {
    assert.equal(sequenceAfter('10', '9'), true);
    assert.equal(sequenceAfter('9', '10'), false);
    assert.equal(sequenceAfter('5', '5'), false);
    assert.equal(sequenceAfter('1', null), true);
  });

  it('the create body: payloads with fresh uuids and config; back to the older body unchanged', () => {
    let n = 0;
    const older = {
      title: 'ultraplan: x',
      events: [
        { type: 'event' as const, data: setPlanModeEvent('set-mode-1') },
        { type: 'event' as const, data: userMessageEvent('plan it') },
      ],
      session_context: { sources: [{ type: 'git_repository', url: 'https://github.com/a/b' }], outcomes: [], model: 'm' },
      environment_id: 'env_1',
    };
    const current = toCodeCreateRequest(older, () => `u${++n}`);
    assert.deepEqual(current.events.map((e) => e.payload.uuid), ['u1', 'u2']);
    assert.deepEqual(current.config, older.session_context);
    assert.equal(current.environment_id, 'env_1');
    assert.equal('session_context' in current, false);
    const back = toV1CreateRequest(current);
    assert.deepEqual(back.events.map((e) => e.data.type), ['control_request', 'user']);
    assert.deepEqual(back.session_context, older.session_context);
    assert.equal(withUuid({ type: 'user', uuid: 'mine' }, () => 'fresh').uuid, 'mine');
  });
});
