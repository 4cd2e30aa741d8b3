import assert from 'node:assert/strict';
import { endedExecutions, type ExecutionEnd } from '../../../src/core/execution/verificationWords';

const hash = 'a'.repeat(64);
const at = (phase: string, planHash: string | undefined = hash, key = 'embedded:a'): ExecutionEnd => ({ key, phase, planHash });

describe('execution/verificationWords: when a verification starts by itself', () => {
  it('starts once when this window sees an execution end, not for a session first seen completed', () => {
    const seen = new Map<string, string>();
    assert.deepEqual(endedExecutions(seen, [at('completed', hash, 'embedded:restored'), at('executing')]), [], 'first sight: nothing');
    assert.deepEqual(endedExecutions(seen, [at('completed', hash, 'embedded:restored'), at('executing')]), []);
    assert.deepEqual(endedExecutions(seen, [at('completed', hash, 'embedded:restored'), at('completed')]), [at('completed')]);
    assert.deepEqual(endedExecutions(seen, [at('completed', hash, 'embedded:restored'), at('completed')]), [], 'the same end: once');
  });

  it('a Continue that runs again and ends is a new end; a session with no approved plan never starts one', () => {
    const seen = new Map<string, string>();
    endedExecutions(seen, [at('executing')]);
    assert.equal(endedExecutions(seen, [at('completed')]).length, 1);
    endedExecutions(seen, [at('executing')]);
    assert.equal(endedExecutions(seen, [at('completed')]).length, 1);
    const other = new Map<string, string>();
    endedExecutions(other, [{ ...at('executing'), planHash: undefined }]);
    assert.deepEqual(endedExecutions(other, [{ ...at('completed'), planHash: undefined }]), []);
    endedExecutions(other, [at('failed')]);
    assert.deepEqual(endedExecutions(other, [at('failed')]), [], 'a failed execution is not verified by itself');
  });

  it('forgets the sessions no longer followed', () => {
    const seen = new Map<string, string>();
    endedExecutions(seen, [at('executing'), at('executing', hash, 'embedded:b')]);
    endedExecutions(seen, [at('executing')]);
    assert.deepEqual([...seen.keys()], ['embedded:a']);
    assert.deepEqual(endedExecutions(seen, [at('completed', hash, 'embedded:b')]), [], 'seen again: first sight');
  });
});
