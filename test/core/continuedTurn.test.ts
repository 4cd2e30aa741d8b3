// A turn after the execution ended (Continue, Fix, any message the backend takes): the scanner
// counts the turns that ended and sees a person's message open a new one, followNextResult follows
// from the cursor to that turn's result with every event read once (a dropped read included), and
// the session model shows the session executing again, its checklist open, until the turn ends.
import * as assert from 'node:assert/strict';
import { planHash } from '../../src/core/decision';
import { parseEventBatch } from '../../src/core/eventBatch';
import { progressEvent } from '../../src/core/execution/progress';
import { startChecklist } from '../../src/core/execution/startChecklist';
import { UltraplanPollError } from '../../src/core/errors';
import { followNextResult, type PollRead } from '../../src/core/poller';
import { ExitPlanModeScanner } from '../../src/core/scanner';
import { SessionModel } from '../../src/core/sessionModel';
import { parsePersistedSessions } from '../../src/core/persistedSessions';
import { restoredModelOptions, toPersisted } from '../../src/core/sessionRecord';
import { MemoryBackend } from '../support/memoryBackend';
import { TEST_IDENTITY, approve, assistantText, exitPlan, result, toolResult, toolUse, userText } from '../support/sessionEvents';

const PLAN = '# Greetings\n\n1. Create greet.ts\n2. Document greet in README.md\n';

const todos = (first: 'pending' | 'in_progress' | 'completed', second: 'pending' | 'in_progress' | 'completed', seq: number) =>
  progressEvent(planHash(PLAN), {
    kind: 'todos',
    seq,
    at: new Date(0).toISOString(),
    source: 'acp_plan',
    entries: [
      { content: 'Create greet.ts', status: first },
      { content: 'Document greet in README.md', status: second },
    ],
  }) as unknown as Record<string, unknown>;

/** Planned, approved, carried out without step 2, ended: the log a Continue is sent after. */
const executed = (): Array<Record<string, unknown>> => [
  userText('Add greetings'),
  exitPlan('t1', PLAN),
  approve('t1', PLAN),
  todos('completed', 'pending', 1),
  assistantText('Done with step 1.'),
  result('success'),
];

/** What Continue's turn writes: the person's message, the agent's work on step 2, its result. */
const continued = (): Array<Record<string, unknown>> => [
  userText('Carry out step 2 now.'),
  todos('completed', 'in_progress', 2),
  toolUse('e2', 'Write', { file_path: 'README.md' }),
  toolResult('e2', 'written'),
  todos('completed', 'completed', 3),
  assistantText('Step 2 is done: README.md documents greet.'),
  { ...result('success'), result: 'Step 2 is done.' },
];

/** An event as a batch holds it (parsed: equal in value to what was written). */
const expect = (e: Record<string, unknown>) => parseEventBatch([e]).events[0] ?? parseEventBatch([e]).progress?.[0];

describe('a continued turn (after the execution ended)', () => {
  describe('the scanner', () => {
    it('counts results, keeps the latest, and opens a turn on a person’s message after the execution’s result only', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([userText('Add greetings'), exitPlan('t1', PLAN), approve('t1', PLAN)]);
      assert.equal(scanner.turnOpen, false, 'the planning prompt opens no turn after an execution');
      scanner.ingest([userText('a note while it executes'), result('success')]);
      assert.equal(scanner.resultCount, 1);
      assert.equal(scanner.turnOpen, false);
      // A tool's result and a subagent's message are not a person's message.
      scanner.ingest([toolResult('x', 'output'), { ...userText('from a subagent'), parent_tool_use_id: 'task-1' }]);
      assert.equal(scanner.turnOpen, false);
      scanner.ingest([userText('Carry out step 2 now.')]);
      assert.equal(scanner.turnOpen, true);
      scanner.ingest([assistantText('On it.'), { ...result('success'), result: 'Step 2 is done.' }]);
      assert.equal(scanner.turnOpen, false);
      assert.equal(scanner.resultCount, 2);
      assert.equal(scanner.latestResult?.result, 'Step 2 is done.');
      assert.equal(scanner.executionResult?.result, 'ended: success', 'the execution’s own result stays the first one');
    });

    it('a message and its result in one batch (a replay) leave no turn open', () => {
      const scanner = new ExitPlanModeScanner();
      scanner.ingest([...executed(), ...continued()]);
      assert.equal(scanner.turnOpen, false);
      assert.equal(scanner.resultCount, 2);
      const open = new ExitPlanModeScanner();
      open.ingest([...executed(), ...continued().slice(0, 3)]);
      assert.equal(open.turnOpen, true, 'the replay of a turn still running');
    });
  });

  describe('followNextResult', () => {
    /** The execution read up to its result: the scanner and cursor a Continue starts from. */
    function afterExecution(backend: MemoryBackend) {
      backend.push(...executed());
      const scanner = new ExitPlanModeScanner();
      scanner.ingest(backend.events);
      return { scanner, cursor: String(backend.events.length), resultsBefore: scanner.resultCount };
    }

    it('reads each event after the cursor once, through a dropped read, and ends at the continued turn’s result', async () => {
      const backend = new MemoryBackend();
      const { scanner, cursor, resultsBefore } = afterExecution(backend);
      const turn = continued();
      const read: unknown[] = [];
      let size = 0;
      const retries: number[] = [];
      // The agent writes its turn a few events at a time; one read in the middle fails.
      const script = [turn.slice(0, 2), 'drop', turn.slice(2, 4), [], turn.slice(4)] as const;
      let step = 0;
      const next = () => {
        const s = script[step++];
        if (s === 'drop') backend.failReads.push(new TypeError('fetch failed'));
        else if (s) backend.push(...s);
      };
      next();
      const ended = await followNextResult({
        sessionId: 's1',
        transport: backend.transport,
        pollIntervalMs: 1,
        scanner,
        resultsBefore,
        initialCursor: cursor,
        onPoll: (poll: PollRead) => {
          read.push(...poll.batch.events, ...(poll.batch.progress ?? []));
          size += poll.batch.size;
          next();
        },
        onRetry: (retry) => {
          retries.push(retry.failures);
          next();
        },
      });
      assert.deepEqual(retries, [1], 'the dropped read was tried again');
      assert.equal(size, turn.length, 'every event of the turn, once');
      assert.deepEqual(new Set(read), new Set(turn.map((e) => expect(e))), 'each of them');
      assert.equal(ended.result, 'Step 2 is done.');
      assert.equal(ended.cursor, String(backend.events.length));
      assert.equal(scanner.resultCount, resultsBefore + 1);
    });

    it('returns at once when the turn’s result was read already, and fails when the session is archived meanwhile', async () => {
      const backend = new MemoryBackend();
      const { scanner, cursor, resultsBefore } = afterExecution(backend);
      scanner.ingest(continued());
      backend.failReads.push(new Error('not read: the result is known'));
      const ended = await followNextResult({
        sessionId: 's1',
        transport: backend.transport,
        scanner,
        resultsBefore,
        initialCursor: cursor,
      });
      assert.equal(ended.result, 'Step 2 is done.');
      assert.equal(backend.reads, 0);

      const archived = new MemoryBackend();
      const before = afterExecution(archived);
      archived.status = 'archived';
      await assert.rejects(
        followNextResult({ sessionId: 's1', transport: archived.transport, pollIntervalMs: 1, ...before, initialCursor: before.cursor }),
        (err: unknown) =>
          err instanceof UltraplanPollError &&
          err.reason === 'terminated' &&
          err.message === 'The session was archived before the continued work finished executing.',
      );
    });
  });

  describe('the session model', () => {
    /** A new session's model that reads approved plans into checklists. */
    const checklistModel = () =>
      new SessionModel({ identity: TEST_IDENTITY, initialPhase: 'planning', cursor: null, at: 0, planSteps: () => startChecklist });

    it('executes again after `continued`, its checklist open, until the next result; the step it carried out is done', () => {
      const model = checklistModel();
      const poll = (events: Array<Record<string, unknown>>, cursor: string, at: number) => {
        const batch = parseEventBatch(events);
        model.scanner.ingestParsed(batch);
        return model.reduce({ type: 'poll', poll: { batch, status: 'idle', cursor }, at });
      };
      poll(executed(), '6', 1);
      model.reduce({ type: 'ended', by: 'completed', outcome: { text: 'Done with step 1.' }, at: 2 });
      assert.equal(model.state.phase, 'completed');
      assert.equal(model.state.execution?.summary, 'Completed: 1 of 2 steps reported done');

      model.reduce({ type: 'continued', resultsBefore: model.scanner.resultCount, at: 3 });
      assert.equal(model.state.phase, 'executing', 'executing again before the message is read back');
      assert.equal(model.state.ended, undefined);
      assert.equal(model.state.outcome, undefined, 'the last turn’s outcome is not shown while it works again');
      assert.equal(model.state.execution?.finished, false);
      assert.equal(model.snapshot.inbox.progress, 'Executing: 1 of 2 steps done');

      const turn = continued();
      poll(turn.slice(0, 2), '8', 4);
      assert.deepEqual(
        model.state.execution?.checklist.steps.map((s) => s.status),
        ['done', 'in_progress'],
      );
      assert.equal(model.state.phase, 'executing');
      poll(turn.slice(2), '13', 5);
      assert.equal(model.state.execution?.finished, true, 'the turn’s result ends it');
      assert.deepEqual(
        model.state.execution?.checklist.steps.map((s) => s.status),
        ['done', 'done'],
      );
      model.reduce({ type: 'ended', by: 'completed', outcome: { text: 'Step 2 is done.' }, at: 6 });
      assert.equal(model.state.phase, 'completed');
      assert.equal(model.state.execution?.summary, 'Completed: 2 of 2 steps reported done');
    });

    it('a finished session keeps its checklist across a reload (stored as the panel showed it); an unfinished one stores none', () => {
      const model = checklistModel();
      const batch = parseEventBatch([...executed(), ...continued()]);
      model.scanner.ingestParsed(batch);
      model.reduce({ type: 'poll', poll: { batch, status: 'idle', cursor: '13' }, at: 1 });
      assert.equal(toPersisted(model.snapshot).execution, undefined, 'a session still followed replays its log instead');
      model.reduce({ type: 'ended', by: 'completed', outcome: { text: 'Step 2 is done.' }, at: 2 });
      const stored = JSON.parse(JSON.stringify([toPersisted(model.snapshot)])) as unknown;
      const { sessions, dropped } = parsePersistedSessions(stored);
      assert.deepEqual(dropped, []);
      const restored = new SessionModel(restoredModelOptions(sessions[0]!, undefined));
      assert.equal(restored.state.phase, 'completed');
      assert.deepEqual(restored.snapshot.panel.execution, model.snapshot.panel.execution);
      assert.deepEqual(restored.state.execution?.checklist.counts, model.state.execution?.checklist.counts);
      assert.equal(restored.snapshot.inbox.progress, 'Completed: 2 of 2 steps reported done');
      // Bounded and strict like the rest of the entry: a damaged checklist is not trusted.
      const damaged = JSON.parse(JSON.stringify(stored)) as Array<{ execution: { steps: Array<{ status: string }> } }>;
      damaged[0]!.execution.steps[0]!.status = 'finished';
      assert.equal(parsePersistedSessions(damaged).sessions.length, 0);
    });
  });
});
