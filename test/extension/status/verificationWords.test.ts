// The words the inbox row and the status bar's tooltip take from a completed session's
// verification: none until the store is read, none before completion, the store's otherwise.
import assert from 'node:assert/strict';
import type { PlanRevision } from '../../../src/core/panelMessages';
import { setVerificationWords, withVerificationWords } from '../../../src/extension/status/verificationWords';

const revisions: PlanRevision[] = [];
const entry = (attention: string) => ({ key: 'embedded:a', attention, progress: 'Completed: 3 of 3 steps reported done' });

describe('extension/status/verificationWords: "Completed, verified" on the inbox and the status bar', () => {
  after(() => setVerificationWords(() => undefined));

  it('keeps the reported progress until a verification of the plan is known, and only for a completed session', () => {
    assert.deepEqual(withVerificationWords(entry('completed'), revisions), entry('completed'));
    const asked: string[] = [];
    setVerificationWords((key, given) => {
      asked.push(key);
      assert.equal(given, revisions);
      return 'Completed, verified: 2 of 3 steps; step 3 missing';
    });
    assert.equal(withVerificationWords(entry('completed'), revisions).progress, 'Completed, verified: 2 of 3 steps; step 3 missing');
    assert.deepEqual(withVerificationWords(entry('executing'), revisions), entry('executing'), 'while it executes: its progress');
    assert.deepEqual(asked, ['embedded:a']);
  });
});
