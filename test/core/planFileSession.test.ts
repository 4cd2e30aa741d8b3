import { strict as assert } from 'node:assert';
import { planHash } from '../../src/core/decision';
import {
  MAX_PLAN_FILE_CHARS,
  PLAN_FILE_FIELD,
  PLAN_FILE_SUBTYPE,
  planFileCarryOutPrompt,
  planFileEvents,
  planFileOf,
  planFileRevisePrompt,
  planFileSessionRequest,
  planFileSourceOf,
  readPlanFileField,
} from '../../src/core/planFileSession';
import { CreateSessionRequestSchema, EXIT_PLAN_MODE_TOOL } from '../../src/core/protocol';
import { ExitPlanModeScanner } from '../../src/core/scanner';

const PLAN = '# Plan\n\n1. Do the thing.\n';
const SOURCE = '~/.claude/plans/quiet-fox.md';

describe('planFileSession', () => {
  it('takes a plan with its own hash and a source; no field is no plan file', () => {
    assert.deepEqual(readPlanFileField(undefined), { ok: true, planFile: undefined });
    assert.deepEqual(readPlanFileField(planFileOf(PLAN, SOURCE)), {
      ok: true,
      planFile: { plan: PLAN, sha256: planHash(PLAN), source: SOURCE },
    });
  });

  it('refuses, with the reason, a hash of another text, an empty or oversized plan, a bad hash, a missing source, extra fields', () => {
    const reason = (raw: unknown) => {
      const read = readPlanFileField(raw);
      assert.equal(read.ok, false, JSON.stringify(raw).slice(0, 80));
      return (read as { reason: string }).reason;
    };
    assert.match(reason({ ...planFileOf(PLAN, SOURCE), sha256: planHash(`${PLAN} `) }), /not the SHA-256 of the plan sent/);
    assert.match(reason(planFileOf(' \n\t', SOURCE)), /the plan is empty/);
    assert.match(reason(planFileOf('x'.repeat(MAX_PLAN_FILE_CHARS + 1), SOURCE)), /plan_file/);
    assert.match(reason({ ...planFileOf(PLAN, SOURCE), sha256: 'ABC' }), /64 lower-case hex/);
    assert.match(reason({ plan: PLAN, sha256: planHash(PLAN) }), /source/);
    assert.match(reason({ ...planFileOf(PLAN, SOURCE), approved: true }), /approved/);
    assert.match(reason('plan'), /^plan_file: /);
  });

  it('builds a creation request every service parses: plan mode, one prompt naming the source, the plan beside them', () => {
    const request = planFileSessionRequest(planFileOf(PLAN, SOURCE), 'ultraplan: quiet fox', () => 'id1');
    const parsed = CreateSessionRequestSchema.parse(request);
    assert.equal(parsed.events.length, 2);
    assert.match(JSON.stringify(parsed.events[1]), /Review the plan in ~\/.claude\/plans\/quiet-fox.md/);
    assert.deepEqual((parsed as Record<string, unknown>)[PLAN_FILE_FIELD], planFileOf(PLAN, SOURCE));
  });

  it("writes the plan as a pending ExitPlanMode request of the file's, which the scanner reads as the plan to review", () => {
    const events = planFileEvents(planFileOf(PLAN, SOURCE), { toolUseId: 'toolu_1', requestId: 'req_1' });
    assert.equal(events[0]!.subtype, PLAN_FILE_SUBTYPE);
    assert.equal(events[0]!.plan_hash, planHash(PLAN));
    assert.equal(planFileSourceOf(events[2]!), SOURCE);
    assert.equal(planFileSourceOf({ type: 'control_request' }), undefined);
    const scanner = new ExitPlanModeScanner();
    scanner.ingest(events);
    assert.deepEqual(scanner.pendingPlan, { toolUseId: 'toolu_1', plan: PLAN, requestId: 'req_1' });
    assert.equal((events[2]!.request as { tool_name: string }).tool_name, EXIT_PLAN_MODE_TOOL);
  });

  it("the first turn's prompts carry the plan, its source, and the feedback whole", () => {
    const carry = planFileCarryOutPrompt(PLAN, SOURCE);
    assert.ok(carry.includes(SOURCE) && carry.endsWith(PLAN));
    const revise = planFileRevisePrompt(PLAN, 'Too vague.\n\nOn plan line 3:\n> 1. Do the thing.\n\nWhich thing?', SOURCE);
    assert.ok(revise.includes('Which thing?') && revise.includes(PLAN) && /Stay in plan mode/.test(revise));
  });
});
