// Jules's activities as our events: the shapes Google's own example session shows (the reference's
// ListActivities sample), a plan superseded without a decision, an approval made in Jules's web
// app or by its timer, a failure with its reason, and the files a change set touches.
import assert from 'node:assert/strict';
import { ActivityEvents, SUPERSEDED_FEEDBACK, patchPaths, planMarkdown } from '../../../src/client/jules/activityEvents';
import { statusOf } from '../../../src/client/jules/backend';
import { JULES_SESSION_STATES } from '../../../src/client/jules/schemas';
import { ExitPlanModeScanner } from '../../../src/core/scanner';
import { parseEventBatch } from '../../../src/core/eventBatch';

const S = 'sessions/14550388554331055113';
const activity = (id: string, member: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: `${S}/activities/${id}`,
  id,
  createTime: '2025-10-03T05:43:42.801654Z',
  originator: 'agent',
  ...member,
  ...extra,
});
const plan = (id: string, titles: string[]) => ({
  planGenerated: { plan: { id, steps: titles.map((title, index) => ({ id: `${id}-${index}`, title, description: '', index })) } },
});

function scan(events: ActivityEvents) {
  const scanner = new ExitPlanModeScanner();
  scanner.ingestParsed(parseEventBatch(events.events));
  return scanner;
}

describe('Jules activities as session events', () => {
  it('writes the plan as numbered steps in index order, descriptions indented under their step', () => {
    const markdown = planMarkdown({
      id: 'p',
      steps: [
        { title: 'Second', index: 1, description: 'Why:\n\nbecause.' },
        { title: 'First', index: 0 },
      ],
    });
    assert.equal(markdown, "# Jules's plan\n\n1. First\n2. Second\n\n   Why:\n\n   because.\n");
    assert.match(planMarkdown({ id: 'p' }), /no steps/);
  });

  it('a plan Jules replaces before any decision is closed as not approved; the new one waits', () => {
    const events = new ActivityEvents();
    events.add(activity('a1', plan('p1', ['One'])));
    events.add(activity('a2', plan('p2', ['One', 'Two'])));
    const scanner = scan(events);
    assert.deepEqual(
      scanner.revisions.map((r) => r.outcome),
      [{ kind: 'rejected', feedback: SUPERSEDED_FEEDBACK }, { kind: 'pending' }],
    );
    assert.equal(events.pending?.planId, 'p2');
  });

  it("an approval made outside Ultraplan (Jules's web app, its timer) approves the plan here too", () => {
    const events = new ActivityEvents();
    events.add(activity('a1', plan('p1', ['One'])));
    events.add(activity('a2', { planApproved: { planId: 'p1' } }, { originator: 'user' }));
    const scanner = scan(events);
    assert.equal(scanner.revisions[0]!.outcome.kind, 'approved');
    assert.equal(events.pending, undefined);
  });

  it('a failure ends the session with its reason; an activity seen twice is taken once', () => {
    const events = new ActivityEvents();
    const failed = activity('a1', { sessionFailed: { reason: 'Unable to install dependencies' } });
    assert.equal(events.add(failed), true);
    assert.equal(events.add(failed), false);
    assert.deepEqual(events.events, [
      {
        type: 'result',
        id: 'jules:a1',
        subtype: 'error_during_execution',
        is_error: true,
        errors: ['Unable to install dependencies'],
        result: 'Unable to install dependencies',
      },
    ]);
  });

  it('a message while no plan waits is the user speaking; the agent answers in text', () => {
    const events = new ActivityEvents();
    events.add(activity('a1', { userMessaged: { userMessage: 'Also add tests' } }, { originator: 'user' }));
    events.add(activity('a2', { agentMessaged: { agentMessage: 'Which framework?' } }));
    assert.deepEqual(
      events.events.map((e) => e.type),
      ['user', 'assistant'],
    );
    assert.equal(scan(events).lastAssistantText, 'Which framework?');
  });

  it('reads the paths of a unified diff, deletions included', () => {
    const patch = [
      'diff --git a/src/App.js b/src/App.js',
      '--- a/src/App.js',
      '+++ b/src/App.js',
      '@@ -1 +1 @@',
      '-x',
      '+y',
      '--- a/old.txt',
      '+++ /dev/null',
      '--- /dev/null',
      '+++ b/new.txt',
    ].join('\n');
    assert.deepEqual(patchPaths(patch), ['src/App.js', 'old.txt', 'new.txt']);
  });

  it('maps every state of the reference to a status the follower knows', () => {
    const statuses = Object.fromEntries([...JULES_SESSION_STATES, 'SOMETHING_NEW'].map((state) => [state, statusOf(state)]));
    assert.deepEqual(statuses, {
      STATE_UNSPECIFIED: 'running',
      QUEUED: 'running',
      PLANNING: 'running',
      AWAITING_PLAN_APPROVAL: 'requires_action',
      AWAITING_USER_FEEDBACK: 'idle',
      IN_PROGRESS: 'running',
      PAUSED: 'idle',
      FAILED: 'idle',
      COMPLETED: 'idle',
      SOMETHING_NEW: 'running',
    });
  });
});
