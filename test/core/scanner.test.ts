import assert from 'node:assert/strict';
import { ExitPlanModeScanner, type ScanVerdict } from '../../src/core/scanner';
import { UltraplanPollError } from '../../src/core/errors';
import { APPROVED_PLAN_MARKER, ULTRAPLAN_TELEPORT_SENTINEL } from '../../src/core/protocol';
import {
  approve,
  approvedText,
  assistantText,
  canUseTool,
  editedText,
  exitPlan,
  reject,
  result,
  teleport,
  toolResult,
  toolUse,
  userText,
} from '../support/sessionEvents';

interface Case {
  rule: string;
  /** One entry per ingest call. */
  batches: unknown[][];
  /** The verdict of each ingest, in order. */
  verdicts: ScanVerdict[];
  after?: { rejectCount?: number; hasPendingPlan?: boolean; everSeenPending?: boolean; pendingId?: string | null };
}

const P = { kind: 'pending' } as const;
const U = { kind: 'unchanged' } as const;

const cases: Case[] = [
  {
    rule: 'an ExitPlanMode call without a result is pending',
    batches: [[exitPlan('A', 'plan A')]],
    verdicts: [P],
    after: { hasPendingPlan: true, everSeenPending: true, rejectCount: 0, pendingId: 'A' },
  },
  {
    rule: 'a non-error result with the marker is an approval',
    batches: [[exitPlan('A', 'plan A')], [approve('A', '# Plan\n- step')]],
    verdicts: [P, { kind: 'approved', plan: '# Plan\n- step' }],
    after: { hasPendingPlan: false, everSeenPending: true },
  },
  {
    rule: 'call and approval in one batch: approved, never pending',
    batches: [[exitPlan('A'), approve('A', 'p')]],
    verdicts: [{ kind: 'approved', plan: 'p' }],
    after: { everSeenPending: false },
  },
  {
    rule: 'the edited marker gives the edited plan',
    batches: [[exitPlan('A', 'original'), toolResult('A', editedText('edited by me'))]],
    verdicts: [{ kind: 'approved', plan: 'edited by me' }],
  },
  {
    rule: 'the edited marker wins over the plain one',
    batches: [[exitPlan('A'), toolResult('A', `${APPROVED_PLAN_MARKER}old\n\n${editedText('new')}`)]],
    verdicts: [{ kind: 'approved', plan: 'new' }],
  },
  {
    rule: 'trailing whitespace of the plan is trimmed, leading kept',
    batches: [[exitPlan('A'), approve('A', '  indented\n\n \t')]],
    verdicts: [{ kind: 'approved', plan: '  indented' }],
  },
  {
    rule: 'content as text blocks reads like the string',
    batches: [
      [
        exitPlan('A'),
        toolResult('A', [
          { type: 'text', text: 'User has approved your plan.' },
          { type: 'text', text: `${APPROVED_PLAN_MARKER}block plan\n` },
        ]),
      ],
    ],
    verdicts: [{ kind: 'approved', plan: 'block plan' }],
  },
  {
    rule: 'text blocks join with no separator, as Claude Code joins them: a marker split across blocks is found',
    batches: [
      [
        exitPlan('A'),
        toolResult('A', [
          { type: 'text', text: 'User has approved your plan. ## Approved ' },
          { type: 'text', text: 'Plan:\nsplit plan' },
        ]),
      ],
    ],
    verdicts: [{ kind: 'approved', plan: 'split plan' }],
  },
  {
    rule: 'a teleport whose sentinel line is a block of its own carries no stray newline',
    batches: [
      [
        exitPlan('A'),
        toolResult(
          'A',
          [
            { type: 'text', text: `${ULTRAPLAN_TELEPORT_SENTINEL}\n` },
            { type: 'text', text: '# Local plan' },
          ],
          true,
        ),
      ],
    ],
    verdicts: [{ kind: 'teleport', plan: '# Local plan' }],
  },
  {
    rule: 'is_error false explicitly is an approval',
    batches: [[exitPlan('A'), toolResult('A', approvedText('p'), false)]],
    verdicts: [{ kind: 'approved', plan: 'p' }],
  },
  {
    rule: 'an error result with the sentinel is a teleport',
    batches: [[exitPlan('A', 'p')], [teleport('A', 'local plan\n')]],
    verdicts: [P, { kind: 'teleport', plan: 'local plan' }],
  },
  {
    rule: 'teleport content as blocks',
    batches: [[exitPlan('A'), toolResult('A', [{ type: 'text', text: `${ULTRAPLAN_TELEPORT_SENTINEL}\nblock plan` }], true)]],
    verdicts: [{ kind: 'teleport', plan: 'block plan' }],
  },
  {
    rule: 'the sentinel in a non-error result is not a teleport (and no marker: see throw case)',
    batches: [[exitPlan('A'), toolResult('A', `${approvedText('real')}\n${ULTRAPLAN_TELEPORT_SENTINEL}\nx`)]],
    verdicts: [{ kind: 'approved', plan: `real\n${ULTRAPLAN_TELEPORT_SENTINEL}\nx` }],
  },
  {
    rule: 'an error result without the sentinel is a rejection',
    batches: [[exitPlan('A', 'p')], [reject('A', 'add tests')], []],
    verdicts: [P, { kind: 'rejected', id: 'A' }, U],
    after: { rejectCount: 1, hasPendingPlan: false },
  },
  {
    rule: 'an error result carrying the approval marker is still a rejection',
    batches: [[exitPlan('A'), toolResult('A', approvedText('x'), true)]],
    verdicts: [{ kind: 'rejected', id: 'A' }],
    after: { rejectCount: 1 },
  },
  {
    rule: 'after a rejection the next call is pending again',
    batches: [[exitPlan('A')], [reject('A', 'no')], [exitPlan('B', 'rev 2')], [approve('B', 'rev 2')]],
    verdicts: [P, { kind: 'rejected', id: 'A' }, P, { kind: 'approved', plan: 'rev 2' }],
    after: { rejectCount: 1 },
  },
  {
    rule: 'a rejection superseded in its batch by the next call still counts (ours)',
    batches: [[exitPlan('A', 'v1'), reject('A', 'no'), exitPlan('B', 'v2')]],
    verdicts: [P],
    after: { rejectCount: 1, hasPendingPlan: true, pendingId: 'B' },
  },
  {
    rule: 'a rejection moves the target to an older pending call (on the next ingest, even empty)',
    batches: [[exitPlan('A', 'old'), exitPlan('B', 'new'), reject('B', 'no')], []],
    verdicts: [{ kind: 'rejected', id: 'B' }, P],
    after: { rejectCount: 1, hasPendingPlan: true, pendingId: 'A', everSeenPending: true },
  },
  {
    rule: 'two rejections in one batch are both counted, the older on the rescan',
    batches: [[exitPlan('A'), reject('A', 'x'), exitPlan('B'), reject('B', 'y')], [], []],
    verdicts: [{ kind: 'rejected', id: 'B' }, { kind: 'rejected', id: 'A' }, U],
    after: { rejectCount: 2 },
  },
  {
    rule: 'approval and a later error result in one batch: approved',
    batches: [[exitPlan('A'), approve('A', 'p'), result('error_during_execution')]],
    verdicts: [{ kind: 'approved', plan: 'p' }],
  },
  {
    rule: 'teleport and a later error result in one batch: teleport',
    batches: [[exitPlan('A'), teleport('A', 'p'), result('error_max_turns')]],
    verdicts: [{ kind: 'teleport', plan: 'p' }],
  },
  {
    rule: 'rejection and termination in one batch: terminated, rejection counted',
    batches: [[exitPlan('A'), reject('A', 'no'), result('error_max_turns')]],
    verdicts: [{ kind: 'terminated', subtype: 'error_max_turns' }],
    after: { rejectCount: 1, hasPendingPlan: false },
  },
  {
    rule: 'termination wins over pending',
    batches: [[exitPlan('A'), result('error_max_budget_usd')]],
    verdicts: [{ kind: 'terminated', subtype: 'error_max_budget_usd' }],
    after: { hasPendingPlan: true, everSeenPending: false },
  },
  {
    rule: 'termination without any plan',
    batches: [[assistantText('thinking'), result('error_during_execution')], []],
    verdicts: [
      { kind: 'terminated', subtype: 'error_during_execution' },
      { kind: 'terminated', subtype: 'error_during_execution' },
    ],
  },
  {
    rule: 'an unknown error subtype still terminates',
    batches: [[result('error_something_new')]],
    verdicts: [{ kind: 'terminated', subtype: 'error_something_new' }],
  },
  {
    rule: 'a success result (end of a turn) does not terminate',
    batches: [[assistantText('Which database?'), result('success')]],
    verdicts: [U],
  },
  {
    rule: 'pending survives a success result',
    batches: [[exitPlan('A'), result('success')]],
    verdicts: [P],
  },
  {
    rule: 'an empty batch does not rescan: unchanged while a plan stays pending',
    batches: [[exitPlan('A')], []],
    verdicts: [P, U],
    after: { hasPendingPlan: true },
  },
  {
    rule: 'results of other tools are ignored',
    batches: [[toolUse('X', 'Bash', { command: 'ls' }), toolResult('X', approvedText('not a plan'))]],
    verdicts: [U],
  },
  {
    rule: 'a tool_result before its tool_use in the same batch is matched',
    batches: [[approve('A', 'p'), exitPlan('A')]],
    verdicts: [{ kind: 'approved', plan: 'p' }],
  },
  {
    // The stream is ordered; an orphan result from an earlier batch is not held (memory bound).
    rule: 'a tool_result in an earlier batch than its tool_use is not held',
    batches: [[approve('A', 'p')], [exitPlan('A')]],
    verdicts: [U, P],
  },
  {
    rule: 'a result whose can_use_tool request was seen is held until the tool_use arrives',
    batches: [[canUseTool('r1', 'A', 'p'), approve('A', 'p')], [exitPlan('A')]],
    verdicts: [U, { kind: 'approved', plan: 'p' }],
  },
  {
    rule: 'a repeated tool_use id counts once',
    batches: [[exitPlan('A'), exitPlan('A'), reject('A', 'x')], []],
    verdicts: [{ kind: 'rejected', id: 'A' }, U],
    after: { rejectCount: 1 },
  },
  {
    rule: 'a user message as a string is read without error',
    batches: [[userText('Use Postgres.')]],
    verdicts: [U],
  },
];

describe('ExitPlanModeScanner (docs/protocol.md section 4)', () => {
  for (const c of cases) {
    it(c.rule, () => {
      const scanner = new ExitPlanModeScanner();
      const verdicts = c.batches.map((b) => scanner.ingest(b));
      assert.deepEqual(verdicts, c.verdicts);
      const after = c.after ?? {};
      if (after.rejectCount !== undefined) assert.equal(scanner.rejectCount, after.rejectCount, 'rejectCount');
      if (after.hasPendingPlan !== undefined) assert.equal(scanner.hasPendingPlan, after.hasPendingPlan, 'hasPendingPlan');
      if (after.everSeenPending !== undefined) assert.equal(scanner.everSeenPending, after.everSeenPending, 'everSeenPending');
      if (after.pendingId !== undefined) assert.equal(scanner.pendingPlan?.toolUseId ?? null, after.pendingId, 'pendingPlan');
      assert.equal(scanner.malformedCount, 0);
    });
  }

  describe('an approval without a marker', () => {
    for (const [label, content] of [
      ['string', 'User approved.'],
      ['blocks', [{ type: 'text', text: 'User approved.' }]],
      ['no content', undefined],
    ] as const) {
      it(`throws extract_marker_missing (${label}), carrying the reject count`, () => {
        const scanner = new ExitPlanModeScanner();
        scanner.ingest([exitPlan('A'), reject('A', 'no'), exitPlan('B')]);
        assert.equal(scanner.rejectCount, 1);
        assert.throws(
          () => scanner.ingest([toolResult('B', content)]),
          (err: unknown) =>
            err instanceof UltraplanPollError &&
            err.reason === 'extract_marker_missing' &&
            err.rejectCount === 1 &&
            /Approved Plan/.test(err.message),
        );
      });
    }
  });

  describe('the pending plan', () => {
    it('comes from the tool_use input', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A', '# From tool_use')]);
      assert.deepEqual(scanner.pendingPlan, { toolUseId: 'A', plan: '# From tool_use' });
    });

    it('comes from the can_use_tool request when the tool_use has none, with its request id', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A'), canUseTool('req-7', 'A', '# From request')]);
      assert.deepEqual(scanner.pendingPlan, { toolUseId: 'A', plan: '# From request', requestId: 'req-7' });
    });

    it('takes the request plan (what the decision answers) over the tool_use one', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A', 'v1')]);
      scanner.ingest([canUseTool('req-1', 'A', 'v1 as requested')]);
      assert.deepEqual(scanner.pendingPlan, { toolUseId: 'A', plan: 'v1 as requested', requestId: 'req-1' });
    });

    it('is null-planned when neither carried a plan, and null when nothing is pending', () => {
      const scanner = new ExitPlanModeScanner();
      assert.equal(scanner.pendingPlan, null);
      scanner.ingest([exitPlan('A')]);
      assert.deepEqual(scanner.pendingPlan, { toolUseId: 'A', plan: null });
      scanner.ingest([reject('A', 'no')]);
      assert.equal(scanner.pendingPlan, null);
    });

    it('ignores can_use_tool requests for other tools', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A', 'p'), canUseTool('req-2', 'A', 'bash stuff', 'Bash')]);
      assert.deepEqual(scanner.pendingPlan, { toolUseId: 'A', plan: 'p' });
    });
  });

  describe('the last assistant text', () => {
    it('is the last top-level assistant message, not a subagent one', () => {
      const scanner = new ExitPlanModeScanner();
      assert.equal(scanner.lastAssistantText, null);
      scanner.ingest([assistantText('Exploring.'), assistantText('Should I keep the v1 API?'), assistantText('sub', 'task-1')]);
      assert.equal(scanner.lastAssistantText, 'Should I keep the v1 API?');
      scanner.ingest([toolUse('X', 'Read')]);
      assert.equal(scanner.lastAssistantText, 'Should I keep the v1 API?', 'a message without text keeps the question');
    });
  });

  describe('malformed events', () => {
    it('are skipped and counted, never thrown; valid events of the same batch still count', () => {
      const scanner = new ExitPlanModeScanner();
      const malformed: unknown[] = [
        null,
        'a string',
        42,
        { no: 'type' },
        { type: 7 },
        { type: 'assistant' },
        { type: 'assistant', message: { role: 'assistant', content: 'not blocks' } },
        { type: 'user', message: { role: 'user', content: 5 } },
        { type: 'result' },
        { type: 'control_request', request: { subtype: 'can_use_tool' } },
        // A tool_use without an id would otherwise pass as an "other" block and be missed.
        { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', name: 'ExitPlanMode', input: {} }] } },
        { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', content: 'x' }] } },
      ];
      const verdict = scanner.ingest([...malformed, exitPlan('A', 'p'), { type: 'env_manager_log', data: 'x' }]);
      assert.deepEqual(verdict, { kind: 'pending' });
      assert.equal(scanner.malformedCount, malformed.length);
    });

    it('unknown event types and unknown fields are not malformed', () => {
      const scanner = new ExitPlanModeScanner();
      const withExtra = { ...exitPlan('A', 'p'), future_field: { x: 1 } };
      scanner.ingest([{ type: 'stream_event', anything: true }, withExtra, { type: 'system', subtype: 'init', model: 'm' }]);
      assert.equal(scanner.malformedCount, 0);
      assert.equal(scanner.pendingPlan?.toolUseId, 'A');
    });
  });

  describe('what is validated', () => {
    it("checks only what it reads: other tools' calls and results are not validated, an ExitPlanMode result is", () => {
      const scanner = new ExitPlanModeScanner();
      // A Read call with a numeric input and a result whose content is a number: not read, not counted.
      scanner.ingest([toolUse('R', 'Read', 7), toolResult('R', 42), exitPlan('A', 'p')]);
      assert.equal(scanner.malformedCount, 0);
      // The same bad content on the ExitPlanMode call's result is counted and not taken as a decision.
      assert.deepEqual(scanner.ingest([toolResult('A', 42)]), { kind: 'pending' });
      assert.equal(scanner.malformedCount, 1);
      assert.equal(scanner.pendingPlan?.toolUseId, 'A');
    });

    it('uses nothing of an event with a malformed part it reads', () => {
      const scanner = new ExitPlanModeScanner();
      const call = exitPlan('A', 'p') as { message: { content: unknown[] } };
      const event = { ...call, message: { ...call.message, content: [...call.message.content, null] } };
      assert.deepEqual(scanner.ingest([event]), { kind: 'unchanged' });
      assert.equal(scanner.malformedCount, 1);
      assert.equal(scanner.pendingPlan, null);
    });
  });

  describe('memory', () => {
    it('holds no tool_result that is not an ExitPlanMode call (10,000 tool calls)', () => {
      const scanner = new ExitPlanModeScanner();
      for (let batch = 0; batch < 100; batch++) {
        const events: unknown[] = [];
        for (let i = 0; i < 100; i++) {
          const id = `t-${batch}-${i}`;
          events.push(toolUse(id, 'Read', { file_path: '/x' }), toolResult(id, 'x'.repeat(1024)));
        }
        scanner.ingest(events);
      }
      assert.equal(scanner.storedResultCount, 0);
      scanner.ingest([exitPlan('A'), reject('A', 'no')]);
      assert.equal(scanner.storedResultCount, 1, 'the ExitPlanMode result is held');
    });
  });

  describe('revisions', () => {
    it('lists every ExitPlanMode call with its outcome, oldest first', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A', 'v1'), canUseTool('r1', 'A', 'v1')]);
      scanner.ingest([reject('A', 'Please add a rollback step.')]);
      scanner.ingest([exitPlan('B', 'v2')]);
      assert.deepEqual(scanner.revisions, [
        { toolUseId: 'A', plan: 'v1', requestId: 'r1', outcome: { kind: 'rejected', feedback: 'Please add a rollback step.' } },
        { toolUseId: 'B', plan: 'v2', outcome: { kind: 'pending' } },
      ]);
      scanner.ingest([toolResult('B', editedText('v2 edited'))]);
      assert.deepEqual(scanner.revisions[1]?.outcome, { kind: 'approved', plan: 'v2 edited', edited: true });
    });

    it('shows a teleport', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A', 'v1'), teleport('A', 'v1 local')]);
      assert.deepEqual(scanner.revisions[0]?.outcome, { kind: 'teleport', plan: 'v1 local' });
    });
  });

  describe('after the decision', () => {
    it('remembers it and the first result event after the approval (the execution outcome)', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([result('success'), exitPlan('A', 'p')]);
      assert.equal(scanner.executionResult, null);
      scanner.ingest([approve('A', 'p'), assistantText('Working on it')]);
      assert.deepEqual(scanner.decided, { kind: 'approved', plan: 'p', toolUseId: 'A' });
      assert.equal(scanner.executionResult, null, 'the result before the approval is not the outcome');
      scanner.ingest([result('error_during_execution'), result('success')]);
      assert.deepEqual(scanner.executionResult, {
        subtype: 'error_during_execution',
        isError: true,
        result: 'ended: error_during_execution',
      });
    });

    it('finds the outcome in the approval batch itself', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([exitPlan('A'), approve('A', 'p'), result('success')]);
      assert.equal(scanner.executionResult?.subtype, 'success');
    });
  });
});
