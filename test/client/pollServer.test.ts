// Every outcome of pollForApprovedPlan over real HTTP against the real server process
// (dist/server.mjs, scripted agents from examples/), through the fault proxy, once with plain
// polling and once over the event stream: the outcomes must be the same either way.
import { strict as assert } from 'node:assert';
import { UltraplanPollError } from '../../src/core/errors';
import { pollForApprovedPlan, type ApprovedPlan } from '../../src/core/poller';
import { contentText, teleportDenyMessage } from '../../src/core/protocol';
import { serverForSuite, type ServerProcess } from '../support/serverProcess';
import {
  MODES,
  createPlanSession,
  pollInterval,
  rawEvents,
  scenario,
  scriptedReviewer,
  startRig,
  type ReviewStep,
  type TransportMode,
} from './clientHarness';
import { watchPhases } from '../support/pollPhases';

const SCENARIOS = ['approve', 'revise', 'question', 'fail', 'slow'] as const;
type ScenarioName = (typeof SCENARIOS)[number];

const allow = (plan: string) => ({ behavior: 'allow' as const, updatedInput: { plan } });
const deny = (message: string) => ({ behavior: 'deny' as const, message });

/** What an outcome looks like, comparable across modes. */
type Outcome =
  | { kind: 'plan'; target: 'remote' | 'local'; plan: string; rejectCount: number }
  | { kind: 'failure'; reason: string; rejectCount: number };

describe('pollForApprovedPlan against the real server', function () {
  this.timeout(60_000);
  const servers = new Map<ScenarioName, ServerProcess>(
    SCENARIOS.map((name) => [name, serverForSuite({ scenario: scenario(name), keepAliveMs: 1_000 })]),
  );
  const outcomes = new Map<string, Outcome>();

  async function run(mode: TransportMode, name: ScenarioName, steps: ReviewStep[], timeoutMs = 20_000) {
    const rig = await startRig({ mode, reuse: servers.get(name) });
    try {
      const sessionId = await createPlanSession(rig);
      const reviewer = scriptedReviewer(rig.client, sessionId, steps);
      let result: ApprovedPlan | UltraplanPollError;
      try {
        result = await pollForApprovedPlan({
          sessionId,
          transport: rig.backend.transport,
          pollIntervalMs: pollInterval(mode),
          timeoutMs,
          ...watchPhases(reviewer.onPhase),
        });
      } catch (err) {
        if (!(err instanceof UltraplanPollError)) throw err;
        result = err;
      }
      await reviewer.settled();
      assert.deepEqual(reviewer.failures, []);
      const outcome: Outcome =
        result instanceof UltraplanPollError
          ? { kind: 'failure', reason: result.reason, rejectCount: result.rejectCount }
          : { kind: 'plan', target: result.executionTarget, plan: result.plan, rejectCount: result.rejectCount };
      const stats = rig.backend.streamingTransport?.streamStats(sessionId);
      return { rig, sessionId, outcome, reviewer, result, stats, log: await rawEvents(rig.client, sessionId) };
    } finally {
      await rig.close();
    }
  }

  /** Records the outcome per case, and checks the other mode got the same one. */
  function same(mode: TransportMode, name: string, outcome: Outcome) {
    const other = outcomes.get(`${mode === 'polling' ? 'stream' : 'polling'}:${name}`);
    if (other) assert.deepEqual(outcome, other, `${name}: stream and polling disagree`);
    outcomes.set(`${mode}:${name}`, outcome);
  }

  /** In stream mode, most reads must have come from the stream (it was really used). */
  function streamed(mode: TransportMode, stats: { readsFromStream: number; readsOverHttp: number } | undefined) {
    if (mode !== 'stream') return;
    assert.ok(stats, 'a stream was opened');
    assert.ok(stats.readsFromStream > 0, `reads from the stream: ${JSON.stringify(stats)}`);
  }

  for (const mode of MODES) {
    describe(`over ${mode}`, () => {
      it('approve: the plan as proposed, executed remotely', async () => {
        const { outcome, stats, log } = await run(mode, 'approve', [{ on: 'plan_ready', decide: (plan) => allow(plan) }]);
        assert.deepEqual(outcome, {
          kind: 'plan',
          target: 'remote',
          plan: '# Plan\n\n1. Add a CHANGELOG.md.\n2. Link it from README.md.',
          rejectCount: 0,
        });
        assert.ok(
          log.some((e) => e.type === 'control_response'),
          'the decision is in the log',
        );
        streamed(mode, stats);
        same(mode, 'approve', outcome);
      });

      it('approve edited: the edited plan wins', async () => {
        const edited = '# Plan (edited)\n\n1. Only add CHANGELOG.md.';
        const { outcome } = await run(mode, 'approve', [{ on: 'plan_ready', decide: () => allow(edited) }]);
        assert.deepEqual(outcome, { kind: 'plan', target: 'remote', plan: edited, rejectCount: 0 });
        same(mode, 'approve-edited', outcome);
      });

      it('reject -> revise -> approve, with the feedback in the agent log', async () => {
        const feedback = 'Do not rewrite the parser; find the failing input first.';
        const { outcome, log, reviewer } = await run(mode, 'revise', [
          { on: 'plan_ready', decide: () => deny(feedback) },
          { on: 'plan_ready', decide: (plan) => allow(plan) },
        ]);
        assert.equal(reviewer.remaining.length, 0);
        assert.equal(outcome.kind, 'plan');
        assert.equal(outcome.rejectCount, 1);
        assert.match(outcome.kind === 'plan' ? outcome.plan : '', /^# Plan v2/);
        const fedBack = log.some((e) => {
          const content = (e.message as { content?: unknown } | undefined)?.content;
          return (
            e.type === 'user' &&
            Array.isArray(content) &&
            content.some(
              (b: { type?: string; is_error?: boolean; content?: unknown }) =>
                b.type === 'tool_result' && b.is_error === true && contentText(b.content).includes(feedback),
            )
          );
        });
        assert.ok(fedBack, 'the agent received the feedback as the tool_result of its rejected plan');
        same(mode, 'revise', outcome);
      });

      it('teleport: the plan comes back to run locally', async () => {
        const { outcome } = await run(mode, 'approve', [{ on: 'plan_ready', decide: (plan) => deny(teleportDenyMessage(plan)) }]);
        assert.deepEqual(outcome, {
          kind: 'plan',
          target: 'local',
          plan: '# Plan\n\n1. Add a CHANGELOG.md.\n2. Link it from README.md.',
          rejectCount: 0,
        });
        same(mode, 'teleport', outcome);
      });

      it('question -> reply -> plan -> approve', async () => {
        const { outcome, reviewer, log } = await run(mode, 'question', [
          { on: 'needs_input', reply: 'Node 20, please.' },
          { on: 'plan_ready', decide: (plan) => allow(plan) },
        ]);
        assert.deepEqual(reviewer.phases.slice(0, 1), ['running']);
        assert.ok(reviewer.phases.includes('needs_input'));
        assert.deepEqual(outcome, {
          kind: 'plan',
          target: 'remote',
          plan: '# Plan\n\n1. Target Node 20 in esbuild.\n2. Update engines in package.json.',
          rejectCount: 0,
        });
        assert.ok(log.some((e) => e.type === 'user' && (e.message as { content?: unknown }).content === 'Node 20, please.'));
        same(mode, 'question', outcome);
      });

      it('terminated: the agent fails while planning', async () => {
        const { outcome, result } = await run(mode, 'fail', []);
        assert.deepEqual(outcome, { kind: 'failure', reason: 'terminated', rejectCount: 0 });
        assert.match((result as Error).message, /error_during_execution/);
        same(mode, 'terminated', outcome);
      });

      it('timeout_no_plan: no plan within the timeout', async () => {
        const { outcome } = await run(mode, 'slow', [], 1_200);
        assert.deepEqual(outcome, { kind: 'failure', reason: 'timeout_no_plan', rejectCount: 0 });
        same(mode, 'timeout_no_plan', outcome);
      });

      it('timeout_pending: a plan nobody decides', async () => {
        const { outcome, reviewer } = await run(mode, 'approve', [], 2_000);
        assert.ok(reviewer.phases.includes('plan_ready'));
        assert.deepEqual(outcome, { kind: 'failure', reason: 'timeout_pending', rejectCount: 0 });
        same(mode, 'timeout_pending', outcome);
      });
    });
  }

  // Nested suites run in order, so this one sees what both modes recorded.
  describe('stream vs polling', () => {
    it('ran every case in both modes, with the same outcome (checked case by case above)', () => {
      const names = ['approve', 'approve-edited', 'revise', 'teleport', 'question', 'terminated', 'timeout_no_plan', 'timeout_pending'];
      for (const name of names) for (const mode of MODES) assert.ok(outcomes.has(`${mode}:${name}`), `${mode}:${name}`);
    });
  });
});
