// The one Phase: derived from facts in one place, worded by one table per surface.
import * as assert from 'node:assert/strict';
import { attentionPhase, derivePhase, endedByFromPhase, PHASE_LABELS, PHASES, type PhaseFacts } from '../../src/core/phase';
import { pollPhaseOf } from '../../src/core/poller';

describe('phase', () => {
  const facts = (f: Partial<PhaseFacts>): PhaseFacts => ({
    ended: undefined,
    decided: null,
    localDecision: undefined,
    poll: 'running',
    replied: false,
    agentStopped: false,
    openPermissions: 0,
    initial: 'planning',
    ...f,
  });

  it('is derived from facts, in order of precedence', () => {
    assert.equal(derivePhase(facts({ ended: 'teleported_elsewhere', decided: 'approved' })), 'teleported');
    assert.equal(derivePhase(facts({ ended: 'execution_failed' })), 'failed');
    assert.equal(derivePhase(facts({ decided: 'approved', poll: 'needs_input' })), 'executing');
    assert.equal(derivePhase(facts({ poll: undefined, initial: 'needs_input' })), 'needs_input');
    assert.equal(derivePhase(facts({ poll: 'plan_ready', localDecision: 'approved' })), 'approved');
    assert.equal(derivePhase(facts({ poll: 'plan_ready' })), 'plan_ready');
    assert.equal(derivePhase(facts({ poll: 'needs_input' })), 'needs_input');
    assert.equal(derivePhase(facts({ poll: 'needs_input', openPermissions: 1 })), 'planning');
  });

  it('a poll reads plan_ready, a quiet wait on the person, or work', () => {
    assert.equal(pollPhaseOf(true, 'running', 3), 'plan_ready');
    assert.equal(pollPhaseOf(false, 'idle', 0), 'needs_input');
    assert.equal(pollPhaseOf(false, 'idle', 2), 'running', 'events flowing: working, whatever the status says');
    assert.equal(pollPhaseOf(false, 'running', 0), 'running');
  });

  it('an open permission request takes attention while the session is followed', () => {
    assert.equal(attentionPhase('executing', 1, false), 'needs_permission');
    assert.equal(attentionPhase('executing', 0, false), 'executing');
    assert.equal(attentionPhase('completed', 1, true), 'completed');
  });

  it('a finished session read back from storage ends as it was persisted', () => {
    assert.equal(endedByFromPhase('teleported'), 'teleport');
    assert.equal(endedByFromPhase('stopped'), 'stop');
    assert.equal(endedByFromPhase('completed'), 'completed');
    assert.equal(endedByFromPhase('failed'), 'failed');
  });

  it('every surface has a label for every phase', () => {
    for (const surface of Object.values(PHASE_LABELS)) for (const phase of PHASES) assert.ok(surface[phase].length > 0, phase);
    assert.equal(PHASE_LABELS.words.needs_permission, 'needs permission');
  });
});
