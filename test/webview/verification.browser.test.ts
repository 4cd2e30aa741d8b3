// The conformance checklist in the review panel's webview, in real Chromium under the panel's CSP:
// each step's verdict beside what the agent reported, with its evidence and who verified it;
// Continue on a missing step and the Verify button as messages the host takes; the header's
// "Completed, verified: …"; a failed verification that never reads "verified". Needs a build
// (`npm run build`).
import * as assert from 'node:assert/strict';
import type { PanelVerification } from '../../src/core/execution/panelVerification';
import { parseWebviewToHostMessage, type PanelExecution } from '../../src/core/panelMessages';
import { panelState, revision, sha256, type PanelPage, usePanelBrowser } from './panelPage';

const PLAN = '# Dark mode\n\n1. Add the dark mode toggle\n2. Store the theme setting\n3. Document the toggle\n';
const TITLES = ['Add the dark mode toggle', 'Store the theme setting', 'Document the toggle'];

const execution: PanelExecution = {
  toolUseId: 'toolu_1',
  summary: 'Completed: 3 of 3 steps reported done',
  finished: true,
  steps: TITLES.map((title, i) => ({
    id: String(i + 1),
    title,
    status: 'done' as const,
    startLine: i + 3,
    endLine: i + 3,
    todos: [title],
    files: [],
  })),
  notInPlan: [],
  unattributedFiles: [],
};

function verification(extra: Partial<PanelVerification> = {}): PanelVerification {
  const verdicts = ['done', 'done_differently', 'missing'] as const;
  return {
    planHash: sha256(PLAN),
    changes: 'record 0123456789ab · diff 00ff',
    scope: 'the changes since the plan was approved',
    at: '2026-12-03T23:50:00.000Z',
    kind: 'verified',
    headline: 'Completed, verified: 1 of 3 steps',
    detail: 'the agent reported 3 of 3 done; verified: 1 done, 1 done differently, 1 missing; 1 change not in the plan',
    reported: { done: 3, total: 3 },
    steps: TITLES.map((title, i) => ({
      id: String(i + 1),
      title,
      startLine: i + 3,
      endLine: i + 3,
      verdict: verdicts[i]!,
      explanation: `${verdicts[i]}: as the diff shows`,
      ...(verdicts[i] === 'done_differently' ? { difference: 'kept in memory, not in the settings' } : {}),
      evidence: verdicts[i] === 'missing' ? [] : [{ file: 'src/toggle.ts', startLine: 4, endLine: 9 }],
      verifiedBy: verdicts[i] === 'done' ? ['Claude (ACP) #1'] : ['Gemini CLI (ACP) verifier'],
    })),
    outOfPlan: [
      {
        file: 'src/logger.ts',
        startLine: 1,
        endLine: 12,
        explanation: 'A logger no step asked for.',
        status: 'confirmed',
        foundBy: ['Claude (ACP) #1'],
        confirmedBy: ['Gemini CLI (ACP) verifier'],
      },
    ],
    failures: [],
    ...extra,
  };
}

const completed = () => panelState([revision(1, PLAN, { status: 'approved' })], { phase: 'completed', canDecide: false, execution });

describe('review panel webview: verified against the plan (Chromium)', function () {
  this.timeout(60_000);
  const panels = usePanelBrowser();

  const rows = (p: PanelPage) =>
    p.page.locator('.verification-step').evaluateAll((items) =>
      items.map((item) => ({
        verdict: item.querySelector('.verification-verdict')?.textContent,
        reported: item.querySelector('.verification-reported')?.textContent,
        by: item.querySelector('.verification-by')?.textContent,
        evidence: [...item.querySelectorAll('.verification-evidence button')].map((b) => b.textContent),
        continues: item.querySelector('.continue-step') !== null,
      })),
    );

  it('shows each verdict beside what the agent reported, with evidence and who verified; the header says how many held', async () => {
    const panel = await panels.open();
    await panel.postState(completed());
    assert.equal(await panel.page.locator('.phase-badge').textContent(), 'Completed', 'no verification known: the phase alone');
    await panel.postRaw({ type: 'verification', sessionKey: 'embedded:sess_1', verification: { last: verification(), running: false } });
    const { page } = panel;
    assert.equal(await page.locator('.verification').isVisible(), true);
    assert.equal(await page.locator('.phase-badge').textContent(), 'Completed, verified: 1 of 3 steps');
    assert.equal(
      await page.locator('.verification-summary').textContent(),
      'Completed, verified: 1 of 3 steps. The agent reported 3 of 3 done; verified: 1 done, 1 done differently, 1 missing; 1 change not in the plan.',
    );
    assert.deepEqual(await rows(panel), [
      {
        verdict: 'Done',
        reported: '(agent: reported done)',
        by: 'Verified by Claude (ACP) #1',
        evidence: ['src/toggle.ts:4-9'],
        continues: false,
      },
      {
        verdict: 'Done differently',
        reported: '(agent: reported done)',
        by: 'Verified by Gemini CLI (ACP) verifier',
        evidence: ['src/toggle.ts:4-9'],
        continues: false,
      },
      {
        verdict: 'Missing',
        reported: '(agent: reported done)',
        by: 'Verified by Gemini CLI (ACP) verifier',
        evidence: [],
        continues: true,
      },
    ]);
    assert.equal(await page.locator('.verification-difference').textContent(), 'How it differs: kept in memory, not in the settings');
    assert.match(
      (await page.locator('.verification-out-of-plan').textContent()) ?? '',
      /src\/logger\.ts:1-12.*A logger no step asked for\..*confirmed by Gemini CLI/s,
    );
    await panel.screenshot('verification-checklist');

    const before = (await panel.posted()).length;
    await page.locator('.continue-step').click();
    const continued = await panel.waitForPosted('continueStep', before);
    assert.deepEqual(continued, { type: 'continueStep', sessionKey: 'embedded:sess_1', stepId: '3' });
    assert.ok(parseWebviewToHostMessage(continued).ok, 'the host takes it');
    await page.getByRole('button', { name: 'Verify again' }).click();
    const verify = await panel.waitForPosted('verify', before);
    assert.deepEqual(verify, { type: 'verify', sessionKey: 'embedded:sess_1' });
    await page.getByRole('button', { name: 'src/logger.ts:1-12' }).click();
    assert.deepEqual(await panel.waitForPosted('openFileDiff', before), {
      type: 'openFileDiff',
      sessionKey: 'embedded:sess_1',
      path: 'src/logger.ts',
    });
  });

  it('while a verification runs: its button and Continue are off', async () => {
    const panel = await panels.open();
    await panel.postState(completed());
    await panel.postRaw({ type: 'verification', sessionKey: 'embedded:sess_1', verification: { last: verification(), running: true } });
    assert.equal(await panel.page.locator('.verify-button').isDisabled(), true);
    assert.equal(await panel.page.locator('.continue-step').count(), 0);
    assert.equal(await panel.page.locator('.verification-summary').textContent(), 'Verifying the changes against the approved plan…');
  });

  it('a failed verification says so, with the reviewers that failed, and never "verified"', async () => {
    const panel = await panels.open();
    await panel.postState(completed());
    const failed = verification({
      kind: 'failed',
      headline: 'Verification failed: all 3 finders failed',
      detail: 'the agent reported 3 of 3 done; no step was checked',
      steps: [],
      outOfPlan: [],
      failures: [{ label: 'Claude (ACP) #1', error: 'the agent exited (code 1)' }],
    });
    await panel.postRaw({ type: 'verification', sessionKey: 'embedded:sess_1', verification: { last: failed, running: false } });
    const { page } = panel;
    assert.equal(await page.locator('.phase-badge').textContent(), 'Completed · verification failed');
    assert.equal(await page.locator('.verification-step').count(), 0);
    assert.equal(
      await page.locator('.verification-failed').textContent(),
      'Verification failed: all 3 finders failed. No step was checked.',
    );
    assert.match(
      (await page.locator('.verification-failures').textContent()) ?? '',
      /Claude \(ACP\) #1 failed: the agent exited \(code 1\)/,
    );
    const shown = (await page.locator('.verification').textContent()) ?? '';
    assert.doesNotMatch(shown.replace('Verified against the plan', ''), /\bverified\b/, 'a failure never reads "verified"');
    assert.equal(await page.locator('.verify-button').isDisabled(), false, 'it can be tried again');
  });

  it("ignores another session's verification and one of a plan approved before, and drops one that does not parse", async () => {
    const panel = await panels.open();
    await panel.postState(completed());
    await panel.postRaw({ type: 'verification', sessionKey: 'embedded:other', verification: { last: verification(), running: false } });
    assert.equal(await panel.page.locator('.verification-step').count(), 0);
    await panel.postRaw({
      type: 'verification',
      sessionKey: 'embedded:sess_1',
      verification: { last: verification({ planHash: sha256('an older plan') }), running: false },
    });
    assert.equal(await panel.page.locator('.verification-step').count(), 0);
    assert.equal(await panel.page.locator('.phase-badge').textContent(), 'Completed');
    await panel.postRaw({
      type: 'verification',
      sessionKey: 'embedded:sess_1',
      verification: { last: { kind: 'passed' }, running: false },
    });
    assert.match((await panel.page.locator('.notice-local').textContent()) ?? '', /did not pass validation/);
    assert.equal(await panel.page.locator('.verification-step').count(), 0);
  });
});
