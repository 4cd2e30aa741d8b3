import assert from 'node:assert/strict';
import { parseEventBatch } from '../../src/core/eventBatch';
import {
  MAX_NOTIFIED_PER_SESSION,
  agentModeText,
  formatAge,
  groupInbox,
  inboxBadgeCount,
  inboxDescription,
  inboxGroupOf,
  needNotificationKey,
  rememberNotified,
  revisionDecisionsText,
  type InboxEntry,
} from '../../src/core/inbox';
import { PHASES, type Phase } from '../../src/core/phase';
import { agentModeEvent } from '../../src/core/protocol';
import { SessionModel } from '../../src/core/sessionModel';
import { TEST_IDENTITY } from '../support/sessionEvents';

const FINISHED: ReadonlySet<Phase> = new Set<Phase>(['teleported', 'failed', 'stopped', 'completed']);

function entry(key: string, attention: Phase, changedAt: number, over: Partial<InboxEntry> = {}): InboxEntry {
  return {
    key,
    title: `task ${key}`,
    attention,
    changedAt,
    createdAt: changedAt - 1000,
    finished: FINISHED.has(attention),
    backendLabel: 'Embedded',
    agentLabel: undefined,
    modeText: undefined,
    revisionCount: 0,
    ...over,
  };
}

describe('the plan inbox', () => {
  it('puts every phase in the group of what it needs from the person', () => {
    const groups = Object.fromEntries(PHASES.map((p) => [p, inboxGroupOf({ attention: p, finished: FINISHED.has(p) })]));
    assert.deepEqual(groups, {
      starting: 'running',
      planning: 'running',
      needs_input: 'needs_you',
      plan_ready: 'needs_you',
      agent_stopped: 'needs_you',
      needs_permission: 'needs_you',
      approved: 'running',
      executing: 'running',
      teleported: 'done',
      rejected: 'running',
      failed: 'done',
      stopped: 'done',
      completed: 'done',
    });
    // An approved plan being executed is still followed: Running until the session ends.
    assert.equal(inboxGroupOf({ attention: 'executing', finished: true }), 'done');
  });

  it('groups in order needs you, running, done, leaves empty groups out, and orders within each', () => {
    const groups = groupInbox([
      entry('done-old', 'completed', 10),
      entry('q', 'needs_input', 50),
      entry('run-new', 'executing', 40),
      entry('plan-old', 'plan_ready', 20),
      entry('perm', 'needs_permission', 30),
      entry('run-old', 'planning', 5),
      entry('done-new', 'failed', 60),
    ]);
    assert.deepEqual(
      groups.map((g) => [g.id, g.entries.map((e) => e.key)]),
      [
        // A plan or a permission blocks the agent before a question does; then the latest first.
        ['needs_you', ['perm', 'plan-old', 'q']],
        ['running', ['run-new', 'run-old']],
        ['done', ['done-new', 'done-old']],
      ],
    );
    assert.deepEqual(
      groupInbox([entry('a', 'stopped', 1)]).map((g) => g.label),
      ['Done'],
    );
    assert.deepEqual(groupInbox([]), []);
  });

  it('counts the sessions that need the person for the badge', () => {
    const all = [entry('a', 'plan_ready', 1), entry('b', 'needs_permission', 2), entry('c', 'planning', 3), entry('d', 'failed', 4)];
    assert.equal(inboxBadgeCount(all), 2);
    assert.equal(inboxBadgeCount([]), 0);
  });

  it('describes a session by backend, agent, age and revisions', () => {
    const now = 10 * 60_000;
    assert.equal(
      inboxDescription(entry('a', 'plan_ready', now - 3 * 60_000, { agentLabel: 'Claude (ACP)', revisionCount: 2 }), now),
      'Embedded · Claude (ACP) · 3m ago · 2 revisions',
    );
    assert.equal(
      inboxDescription(entry('b', 'planning', now, { backendLabel: 'Server 127.0.0.1:8787' }), now),
      'Server 127.0.0.1:8787 · just now',
    );
    assert.equal(inboxDescription(entry('c', 'planning', now, { revisionCount: 1 }), now), 'Embedded · just now · 1 revision');
    assert.deepEqual([59_000, 60_000, 59 * 60_000, 60 * 60_000, 25 * 3600_000, -5].map(formatAge), [
      'just now',
      '1m ago',
      '59m ago',
      '1h ago',
      '1d ago',
      'just now',
    ]);
  });

  it('keys a need once per plan and once per question; a permission prompt is its own notification', () => {
    const base = { key: 's', finished: false, planToolUseId: 'tu_1', questionId: 'q1' };
    assert.equal(needNotificationKey({ ...base, attention: 'plan_ready' }), 'plan_ready:tu_1');
    assert.equal(needNotificationKey({ ...base, attention: 'plan_ready', planToolUseId: 'tu_2' }), 'plan_ready:tu_2');
    assert.equal(needNotificationKey({ ...base, attention: 'needs_input' }), 'needs_input:q1');
    assert.equal(needNotificationKey({ ...base, attention: 'needs_permission' }), undefined);
    assert.equal(needNotificationKey({ ...base, attention: 'planning' }), undefined);
    assert.equal(needNotificationKey({ ...base, attention: 'plan_ready', finished: true }), undefined);
    assert.equal(needNotificationKey({ ...base, attention: 'plan_ready', planToolUseId: undefined }), undefined);
  });

  it('remembers announced needs up to a bound, oldest forgotten first, without repeats', () => {
    let notified: string[] = [];
    for (let i = 0; i < MAX_NOTIFIED_PER_SESSION + 5; i++) notified = rememberNotified(notified, `k${i}`);
    assert.equal(notified.length, MAX_NOTIFIED_PER_SESSION);
    assert.equal(notified[0], 'k5');
    assert.deepEqual(rememberNotified(['a', 'b'], 'a'), ['b', 'a']);
  });
});

describe("the agent's reported mode", () => {
  it('reads our mode event, Claude Code init and status events, and ignores other system events', () => {
    const batch = parseEventBatch([
      { type: 'system', subtype: 'init', permissionMode: 'plan', model: 'x' },
      { type: 'system', subtype: 'hook_response', permissionMode: 'bypassPermissions' },
      agentModeEvent({ id: 'plan', name: 'Plan' }, true),
    ]);
    assert.deepEqual(batch.agentMode, { id: 'plan', name: 'Plan', readOnly: true });
    assert.equal(batch.events.length, 0);
    assert.equal(batch.malformed, 0);
    // Claude Code: the permission mode in init, then a status event when it changes.
    assert.deepEqual(parseEventBatch([{ type: 'system', subtype: 'status', status: null, permissionMode: 'acceptEdits' }]).agentMode, {
      id: 'acceptEdits',
    });
    // Our host's init names the agent's own mode, not the permission mode it claims for all.
    assert.deepEqual(
      parseEventBatch([{ type: 'system', subtype: 'init', permissionMode: 'plan', agent: { label: 'x', mode: 'architect' } }]).agentMode,
      { id: 'architect' },
    );
    assert.equal(parseEventBatch([{ type: 'system', subtype: 'status', status: 'compacting' }]).agentMode, undefined);
  });

  it('counts a malformed mode event as malformed and keeps the previous mode', () => {
    const batch = parseEventBatch([
      agentModeEvent({ id: 'plan' }, true),
      { type: 'system', subtype: 'ultraplan_agent_mode', mode: { id: '' } },
      { type: 'system', subtype: 'ultraplan_agent_mode', mode: 'plan' },
    ]);
    assert.equal(batch.malformed, 2);
    assert.deepEqual(batch.agentMode, { id: 'plan', readOnly: true });
  });

  it('is kept by the session model across polls that report nothing, and worded for the person', () => {
    const model = new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0 });
    assert.equal(agentModeText(model.state.agentMode), 'plan (requested)');
    const poll = (raw: unknown[], at: number) =>
      model.reduce({ type: 'poll', poll: { batch: parseEventBatch(raw), status: 'running', cursor: `c${at}` }, at });
    const first = poll([agentModeEvent({ id: 'plan', name: 'Plan' }, true)], 1);
    assert.equal(first.changed, true);
    assert.equal(agentModeText(model.state.agentMode), 'plan (read-only)');
    poll([{ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] } }], 2);
    assert.deepEqual(model.state.agentMode, { id: 'plan', name: 'Plan', readOnly: true });
    const changed = poll([agentModeEvent({ id: 'default', name: 'Default' }, false)], 3);
    assert.equal(changed.changed, true);
    assert.equal(agentModeText(model.state.agentMode), 'default');
    // A restored session starts from the mode it last reported.
    const restored = new SessionModel({
      identity: TEST_IDENTITY,
      initialPhase: 'executing',
      cursor: null,
      at: 0,
      restored: { agentMode: { id: 'acceptEdits' } },
    });
    assert.equal(agentModeText(restored.state.agentMode), 'acceptEdits');
  });
});

describe('inbox: the decisions on each revision, in words', () => {
  it('names each revision as a revision with its status (not a count), and an approval that carried notes as such', () => {
    assert.equal(
      revisionDecisionsText([
        { revision: 1, status: 'rejected' },
        { revision: 2, status: 'approved', notes: 'Keep the file format.' },
      ]),
      'revision 1 rejected, revision 2 approved with notes',
    );
    assert.equal(revisionDecisionsText([{ revision: 1, status: 'pending', notes: '' }]), 'revision 1 pending');
    assert.equal(revisionDecisionsText([]), '');
  });
});
