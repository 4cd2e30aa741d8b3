// The session model keeps the approved plan's execution: the progress events the session's log
// carries (and, on Claude Code on the web, its own TodoWrite / Task / Edit calls), folded into the
// checklist the panel, the inbox and the status bar read from the one snapshot per change.
import * as assert from 'node:assert/strict';
import type { PlanStepsReader } from '../../src/core/executionProgress';
import { startChecklist } from '../../src/core/execution/startChecklist';
import { planHash } from '../../src/core/decision';
import { parseEventBatch } from '../../src/core/eventBatch';
import { progressEvent, type ProgressFact } from '../../src/core/execution';
import { inboxDescription } from '../../src/core/inbox';
import { SessionModel } from '../../src/core/sessionModel';
import type { SessionSnapshot } from '../../src/core/sessionSnapshot';
import {
  TEST_IDENTITY,
  approve,
  assistantText,
  editedText,
  exitPlan,
  result,
  toolResult,
  toolUse,
  userText,
} from '../support/sessionEvents';

const PLAN = '# Plan\n\n1. Add the dark mode toggle\n2. Store the theme setting\n3. Document the toggle in the README\n';
const at = '2026-12-03T10:00:00.000Z';
let seq = 0;
const todos = (...entries: Array<[string, 'pending' | 'in_progress' | 'completed']>): ProgressFact => ({
  kind: 'todos',
  seq: seq++,
  at,
  source: 'acp_plan',
  entries: entries.map(([content, status]) => ({ content, status })),
});
const touched = (path: string): ProgressFact => ({ kind: 'file_touched', seq: seq++, at, path, tool: 'Edit' });

let cursor = 0;
function follow(backendKind: 'server' | 'claude-web' = 'server', planSteps: () => PlanStepsReader | undefined = () => startChecklist) {
  const heard: SessionSnapshot[] = [];
  const model = new SessionModel({
    planSteps,
    identity: { ...TEST_IDENTITY, backendKind },
    initialPhase: 'planning',
    cursor: null,
    at: 0,
    onSnapshot: (s) => heard.push(s),
  });
  const poll = (raw: unknown[], status = 'running') => {
    const batch = parseEventBatch(raw);
    model.scanner.ingestParsed(batch);
    return model.reduce({ type: 'poll', poll: { batch, status, cursor: `c${++cursor}` }, at: 1_000 + cursor });
  };
  return { model, heard, poll };
}

const stepStatuses = (s: SessionSnapshot) => s.panel.execution?.steps.map((step) => `${step.status}: ${step.title}`);

describe('session model: the approved plan as a checklist', () => {
  it('shows the checklist once the plan-steps reader has loaded (the extension loads it after its first load)', () => {
    const loaded: { reader?: PlanStepsReader } = {};
    const { model, poll, heard } = follow('server', () => loaded.reader);
    poll([exitPlan('toolu_1', PLAN)], 'requires_action');
    poll([approve('toolu_1', PLAN)]);
    assert.equal(model.snapshot.panel.execution, undefined, 'no checklist without the reader');
    const before = heard.length;
    loaded.reader = startChecklist;
    model.reduce({ type: 'planStepsLoaded', at: 5_000 });
    assert.equal(heard.length, before + 1, 'its arrival is one change');
    assert.equal(stepStatuses(model.snapshot)?.length, 3);
  });

  it('shows nothing while planning, every step not reported at approval, then what the agent reports, with its files', () => {
    const { model, poll } = follow();
    poll([exitPlan('toolu_1', PLAN)], 'requires_action');
    const planning = model.snapshot;
    assert.equal(planning.state.execution, undefined);
    assert.equal(planning.panel.execution, undefined);
    poll([approve('toolu_1', PLAN)]);
    assert.deepEqual(stepStatuses(model.snapshot), [
      'not_reported: Add the dark mode toggle',
      'not_reported: Store the theme setting',
      'not_reported: Document the toggle in the README',
    ]);
    const hash = planHash(PLAN);
    poll([
      progressEvent(hash, todos(['Add the dark mode toggle', 'in_progress'], ['Store the theme setting', 'pending'])),
      progressEvent(hash, touched('src/toggle.ts')),
      progressEvent(hash, todos(['Add the dark mode toggle', 'completed'], ['Store the theme setting', 'in_progress'])),
      // Another plan's progress (an older revision's agent run) is not this plan's.
      progressEvent(planHash('another plan'), todos(['Document the toggle in the README', 'completed'])),
    ]);
    const snapshot = model.snapshot;
    assert.deepEqual(stepStatuses(snapshot), [
      'done: Add the dark mode toggle',
      'in_progress: Store the theme setting',
      'not_reported: Document the toggle in the README',
    ]);
    assert.deepEqual(snapshot.panel.execution?.steps[0]?.files, ['src/toggle.ts']);
    assert.equal(snapshot.panel.execution?.summary, 'Executing: 1 of 3 steps done');
    assert.equal(snapshot.inbox.progress, 'Executing: 1 of 3 steps done');
    assert.match(inboxDescription(snapshot.inbox, 2_000), /Executing: 1 of 3 steps done$/);
    poll([result('success')], 'idle');
    assert.equal(model.snapshot.panel.execution?.summary, 'Completed: 1 of 3 steps reported done');
    assert.equal(model.snapshot.panel.execution?.finished, true);
  });

  it('makes one snapshot per change, and a change that is not progress keeps the execution part as the same object', () => {
    const { model, heard, poll } = follow();
    poll([exitPlan('toolu_1', PLAN)], 'requires_action');
    poll([approve('toolu_1', PLAN)]);
    const hash = planHash(PLAN);
    poll([progressEvent(hash, todos(['Add the dark mode toggle', 'in_progress']))]);
    const before = model.snapshot;
    const count = heard.length;
    poll([assistantText('Working on it.')]);
    assert.equal(heard.length, count + 1, 'the new cursor is a change');
    assert.equal(model.snapshot.state.execution, before.state.execution);
    assert.equal(model.snapshot.panel.execution, before.panel.execution);
    // The same list again says nothing new.
    poll([progressEvent(hash, todos(['Add the dark mode toggle', 'in_progress']))]);
    assert.equal(model.snapshot.panel.execution, before.panel.execution);
    poll([progressEvent(hash, todos(['Add the dark mode toggle', 'completed']))]);
    assert.notEqual(model.snapshot.panel.execution, before.panel.execution);
  });

  it('binds the progress to the reviewer’s edit when the plan was approved edited', () => {
    const { model, poll } = follow();
    poll([exitPlan('toolu_1', PLAN)], 'requires_action');
    const edited = '# Plan\n\n1. Add the dark mode toggle\n2. Write a test for the toggle';
    poll([toolResult('toolu_1', editedText(`${edited}\n\n`))]);
    poll([progressEvent(planHash(edited), todos(['Write a test for the toggle', 'completed']))]);
    assert.deepEqual(stepStatuses(model.snapshot), ['not_reported: Add the dark mode toggle', 'done: Write a test for the toggle']);
  });

  it("reads Claude Code on the web's own TodoWrite, Task and Edit calls, only after the approval", () => {
    const { model, poll } = follow('claude-web');
    poll(
      [
        exitPlan('toolu_1', PLAN),
        // While planning: not progress.
        toolUse('t0', 'TodoWrite', { todos: [{ content: 'Store the theme setting', status: 'completed', activeForm: 'Storing' }] }),
      ],
      'requires_action',
    );
    poll([
      approve('toolu_1', PLAN),
      toolUse('t1', 'TodoWrite', {
        todos: [
          { content: 'Add the dark mode toggle', status: 'in_progress', activeForm: 'Adding the dark mode toggle' },
          { content: 'Store the theme setting', status: 'pending', activeForm: 'Storing the theme setting' },
        ],
      }),
      toolUse('e1', 'Edit', { file_path: 'src/toggle.ts', old_string: 'a', new_string: 'b' }),
      toolUse('t2', 'TaskCreate', { subject: 'Document the toggle in the README', description: 'docs' }),
      toolResult('t2', 'Task #1 created successfully: Document the toggle in the README'),
      toolUse('t3', 'TaskUpdate', { taskId: '1', status: 'completed' }),
      userText('thanks'),
    ]);
    assert.deepEqual(stepStatuses(model.snapshot), [
      'in_progress: Add the dark mode toggle',
      'pending: Store the theme setting',
      'done: Document the toggle in the README',
    ]);
    assert.deepEqual(model.snapshot.panel.execution?.steps[0]?.files, ['src/toggle.ts']);
  });

  it("does not read tool calls as progress on a backend whose host writes progress events (the ACP translator's)", () => {
    const { model, poll } = follow('server');
    poll([exitPlan('toolu_1', PLAN)], 'requires_action');
    poll([approve('toolu_1', PLAN), toolUse('t1', 'TodoWrite', { todos: [{ content: 'Add the dark mode toggle', status: 'completed' }] })]);
    assert.equal(model.snapshot.panel.execution?.steps[0]?.status, 'not_reported');
  });
});
