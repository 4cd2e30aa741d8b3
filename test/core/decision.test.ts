import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ControlResponseEventSchema, ULTRAPLAN_TELEPORT_SENTINEL } from '../../src/core/protocol';
import { DecisionBindingSchema } from '../../src/core/panelMessages';
import { DecisionGate, bindingFor, decisionEvent, planHash, type PendingPlanRef } from '../../src/core/decision';

const SESSION = 'sess_1';
const PLAN_1 = '# Plan\n\n1. Read the code\n2. Change it\n';
const PLAN_2 = '# Plan v2\n\n1. Read the code\n2. Change it carefully\n';

function pending(toolUseId: string, plan: string): PendingPlanRef {
  return { sessionId: SESSION, toolUseId, plan };
}

describe('decision binding', () => {
  it('hashes the plan text exactly as shown (sha256 hex, no trimming)', () => {
    assert.equal(planHash(PLAN_1), createHash('sha256').update(PLAN_1).digest('hex'));
    assert.notEqual(planHash(PLAN_1), planHash(PLAN_1.trimEnd()));
    assert.ok(DecisionBindingSchema.safeParse(bindingFor(SESSION, 'tu_1', PLAN_1)).success);
  });

  it('refuses a binding whose hash is not sha256 hex', () => {
    const r = DecisionBindingSchema.safeParse({ sessionId: SESSION, toolUseId: 'tu_1', planHash: 'abc' });
    assert.equal(r.success, false);
  });

  it('accepts a decision on the pending plan once, then refuses the double click', () => {
    const gate = new DecisionGate();
    const binding = bindingFor(SESSION, 'tu_1', PLAN_1);
    assert.deepEqual(gate.claim(binding, pending('tu_1', PLAN_1), SESSION), { ok: true });
    const again = gate.claim(binding, pending('tu_1', PLAN_1), SESSION);
    assert.equal(again.ok, false);
    assert.equal(!again.ok && again.reason, 'already_decided');
    assert.match(!again.ok ? again.message : '', /already decided/);
  });

  it('refuses a replay after reload: used bindings come back from persistence', () => {
    const first = new DecisionGate();
    const binding = bindingFor(SESSION, 'tu_1', PLAN_1);
    assert.ok(first.claim(binding, pending('tu_1', PLAN_1), SESSION).ok);
    const restored = new DecisionGate(first.used());
    const replay = restored.claim(binding, pending('tu_1', PLAN_1), SESSION);
    assert.equal(!replay.ok && replay.reason, 'already_decided');
  });

  it('refuses a decision for a superseded revision (an old card clicked after the agent revised)', () => {
    const gate = new DecisionGate();
    const stale = bindingFor(SESSION, 'tu_1', PLAN_1);
    const r = gate.claim(stale, pending('tu_2', PLAN_2), SESSION);
    assert.equal(!r.ok && r.reason, 'superseded');
    assert.match(!r.ok ? r.message : '', /superseded/);
    // Refused decisions are not remembered: the current plan can still be decided.
    assert.ok(gate.claim(bindingFor(SESSION, 'tu_2', PLAN_2), pending('tu_2', PLAN_2), SESSION).ok);
  });

  it('refuses when the plan text differs from the one shown (same tool_use id)', () => {
    const gate = new DecisionGate();
    const r = gate.claim(bindingFor(SESSION, 'tu_1', PLAN_1), pending('tu_1', PLAN_1 + 'extra'), SESSION);
    assert.equal(!r.ok && r.reason, 'plan_changed');
    assert.equal(gate.isUsed(SESSION, 'tu_1'), false);
  });

  it('refuses when nothing is pending (decided elsewhere, or stale)', () => {
    const gate = new DecisionGate();
    const r = gate.claim(bindingFor(SESSION, 'tu_1', PLAN_1), undefined, SESSION);
    assert.equal(!r.ok && r.reason, 'no_pending_plan');
  });

  it('refuses a binding for another session', () => {
    const gate = new DecisionGate();
    const r = gate.claim(bindingFor('other', 'tu_1', PLAN_1), pending('tu_1', PLAN_1), SESSION);
    assert.equal(!r.ok && r.reason, 'wrong_session');
  });

  it('release() lets a decision whose send failed be retried', () => {
    const gate = new DecisionGate();
    const binding = bindingFor(SESSION, 'tu_1', PLAN_1);
    assert.ok(gate.claim(binding, pending('tu_1', PLAN_1), SESSION).ok);
    gate.release(binding);
    assert.ok(gate.claim(binding, pending('tu_1', PLAN_1), SESSION).ok);
  });

  it('remembers one decision per tool_use: reject then approve of the same plan is refused', () => {
    const gate = new DecisionGate();
    const binding = bindingFor(SESSION, 'tu_1', PLAN_1);
    assert.ok(gate.claim(binding, pending('tu_1', PLAN_1), SESSION).ok);
    assert.equal(gate.check(binding, pending('tu_1', PLAN_1), SESSION).ok, false);
  });
});

describe('decision events', () => {
  function parse(e: unknown) {
    return ControlResponseEventSchema.parse(e).response;
  }
  it('approve allows with the plan shown as updatedInput.plan', () => {
    const r = parse(decisionEvent('req_1', PLAN_1, { kind: 'approve' }));
    assert.equal(r.request_id, 'req_1');
    assert.deepEqual(r.response, { behavior: 'allow', updatedInput: { plan: PLAN_1 } });
  });
  it('an edited approval carries the edited text', () => {
    const r = parse(decisionEvent('req_1', PLAN_1, { kind: 'approve_edited', editedPlan: 'mine' }));
    assert.deepEqual(r.response, { behavior: 'allow', updatedInput: { plan: 'mine' } });
  });
  it('reject denies with the feedback', () => {
    const r = parse(decisionEvent('req_1', PLAN_1, { kind: 'reject', feedback: 'no' }));
    assert.deepEqual(r.response, { behavior: 'deny', message: 'no' });
  });
  it('teleport denies with the sentinel, a newline, then the plan', () => {
    const r = parse(decisionEvent('req_1', PLAN_1, { kind: 'teleport' }));
    assert.deepEqual(r.response, { behavior: 'deny', message: `${ULTRAPLAN_TELEPORT_SENTINEL}\n${PLAN_1}` });
  });
});
