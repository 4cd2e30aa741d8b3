import { strict as assert } from 'node:assert';
import { parseFinderReply, parseVerdictReply, atLeast } from '../../../src/core/review/finding';
import { countVerdicts, mergeFindings, verificationLabel, type RawFinding } from '../../../src/core/review/merge';
import { decideOutcome, exitCodeFor, outcomeDetails, outcomeHeadline, type ReviewerReport } from '../../../src/core/review/outcome';
import { progressLine } from '../../../src/core/review/progress';

const base = {
  file: 'src/a.ts',
  startLine: 3,
  endLine: 4,
  severity: 'major' as const,
  title: 'Off-by-one in the loop bound',
  explanation: 'i <= n reads past the end',
};

function raw(id: string, foundBy: string, patch: Partial<RawFinding> = {}): RawFinding {
  return { ...base, id, foundBy, ...patch };
}

describe('review findings: parse, verify, merge, tell', () => {
  describe('a finder reply', () => {
    it('reads the last fenced JSON block inside prose', () => {
      const text = `I looked.\n\`\`\`json\n{"findings": []}\n\`\`\`\nThen:\n\`\`\`json\n${JSON.stringify({ findings: [base] })}\n\`\`\`\nDone.`;
      const parsed = parseFinderReply(text);
      assert.ok(parsed.ok);
      assert.deepEqual(parsed.value, [base]);
    });

    it('reads a bare JSON reply and an empty list', () => {
      const parsed = parseFinderReply('{"findings": []}');
      assert.ok(parsed.ok);
      assert.deepEqual(parsed.value, []);
    });

    it('refuses prose, unknown fields, a bad severity and a range that ends before it starts, saying where', () => {
      const prose = parseFinderReply('Looks good to me!');
      assert.ok(!prose.ok);
      assert.match(prose.error, /not JSON .*Looks good to me/);
      const extra = parseFinderReply(JSON.stringify({ findings: [{ ...base, confidence: 0.9 }] }));
      assert.ok(!extra.ok);
      assert.match(extra.error, /findings shape/);
      const severity = parseFinderReply(JSON.stringify({ findings: [{ ...base, severity: 'blocker' }] }));
      assert.ok(!severity.ok);
      assert.match(severity.error, /findings\.0\.severity/);
      const backwards = parseFinderReply(JSON.stringify({ findings: [{ ...base, startLine: 9, endLine: 2 }] }));
      assert.ok(!backwards.ok);
      assert.match(backwards.error, /ends \(line 2\) before it starts \(line 9\)/);
    });

    it('reads a verdict and refuses one that is neither confirmed nor refuted', () => {
      const ok = parseVerdictReply('```json\n{"verdict":"refuted","reason":"n is the last index"}\n```');
      assert.ok(ok.ok);
      assert.equal(ok.value.verdict, 'refuted');
      assert.ok(!parseVerdictReply('{"verdict":"maybe","reason":"x"}').ok);
    });
  });

  describe('merge and verification bookkeeping', () => {
    it('merges the same problem from two finders, keeps both finders and both verifiers, worst severity wins', () => {
      const merged = mergeFindings([
        raw('f1', 'Claude #1', { verdict: { by: 'Gemini verifier', verdict: 'confirmed', reason: 'yes' } }),
        raw('f2', 'Codex #2', {
          startLine: 4,
          endLine: 4,
          severity: 'critical',
          title: 'Loop bound off-by-one',
          verdict: { by: 'Claude verifier', verdict: 'confirmed', reason: 'also yes' },
        }),
      ]);
      assert.equal(merged.length, 1);
      const [one] = merged;
      assert.deepEqual(one!.foundBy, ['Claude #1', 'Codex #2']);
      assert.deepEqual(one!.confirmedBy, ['Claude verifier', 'Gemini verifier']);
      assert.equal(one!.severity, 'critical');
      assert.deepEqual([one!.startLine, one!.endLine], [3, 4]);
      assert.equal(verificationLabel(one!), 'verified by 2 of 2');
    });

    it('keeps different problems on the same lines apart, and drops a refuted finding', () => {
      const merged = mergeFindings([
        raw('f1', 'A', { verdict: { by: 'V', verdict: 'confirmed', reason: 'ok' } }),
        raw('f2', 'B', {
          startLine: 5,
          endLine: 5,
          title: 'Secret logged to the console',
          verdict: { by: 'V', verdict: 'confirmed', reason: 'ok' },
        }),
        raw('f3', 'C', { file: 'src/b.ts', verdict: { by: 'V', verdict: 'refuted', reason: 'handled above' } }),
      ]);
      assert.deepEqual(
        merged.map((f) => f.id),
        ['f1', 'f2'],
      );
    });

    it('a group refuted as often as confirmed is dropped; one no verifier could answer is kept as not verified', () => {
      const merged = mergeFindings([
        raw('f1', 'A', { verdict: { by: 'V1', verdict: 'confirmed', reason: 'ok' } }),
        raw('f2', 'B', { verdict: { by: 'V2', verdict: 'refuted', reason: 'no' } }),
        raw('f3', 'C', { file: 'src/c.ts', verdict: { by: 'V3', verdict: 'failed', reason: 'timed out' } }),
      ]);
      assert.equal(merged.length, 1);
      assert.equal(merged[0]!.file, 'src/c.ts');
      assert.equal(merged[0]!.status, 'unverified');
      assert.match(verificationLabel(merged[0]!), /not verified/);
      assert.deepEqual(
        countVerdicts([
          raw('a', 'A', { verdict: { by: 'V', verdict: 'confirmed', reason: '' } }),
          raw('b', 'B', { verdict: { by: 'V', verdict: 'refuted', reason: '' } }),
          raw('c', 'C'),
        ]),
        {
          found: 3,
          verified: 1,
          refuted: 1,
          unverified: 0,
        },
      );
    });
  });

  describe('outcomes', () => {
    const finders = (ok: boolean[]): ReviewerReport[] =>
      ok.map((good, i) => ({
        label: `Agent #${i + 1}`,
        role: 'finder' as const,
        ok: good,
        ...(good ? {} : { error: 'exited with code 1' }),
      }));
    const none = { found: 0, verified: 0, refuted: 0, unverified: 0 };

    it('"No issues found by 3 reviewers" is a clean review, exit 0', () => {
      const outcome = decideOutcome([], none, finders([true, true, true]));
      assert.equal(outcome.kind, 'clean');
      assert.equal(outcomeHeadline(outcome), 'No issues found by 3 reviewers');
      assert.equal(exitCodeFor(outcome, 'nit'), 0);
    });

    it('every finder failing is a failure, never "no issues", exit 2', () => {
      const outcome = decideOutcome([], none, finders([false, false, false]));
      assert.equal(outcome.kind, 'failed');
      assert.equal(outcomeHeadline(outcome), 'The review failed: all 3 reviewers failed');
      assert.equal(exitCodeFor(outcome, 'critical'), 2);
      assert.equal(outcomeDetails(outcome).length, 3);
    });

    it('one finder failing is named and the others still report', () => {
      const outcome = decideOutcome([], none, finders([true, false, true]));
      assert.equal(outcome.kind, 'clean');
      assert.equal(outcomeHeadline(outcome), 'No issues found by 2 reviewers');
      assert.deepEqual(outcomeDetails(outcome), ['Agent #2 failed: exited with code 1', 'The other 2 reviewers reported.']);
    });

    it('the exit code follows --fail-on', () => {
      const [finding] = mergeFindings([raw('f1', 'A', { severity: 'minor', verdict: { by: 'V', verdict: 'confirmed', reason: 'ok' } })]);
      const outcome = decideOutcome([finding!], { found: 1, verified: 1, refuted: 0, unverified: 0 }, finders([true]));
      assert.equal(outcomeHeadline(outcome), '1 issue found by 1 reviewer');
      assert.equal(exitCodeFor(outcome, 'minor'), 1);
      assert.equal(exitCodeFor(outcome, 'major'), 0);
      assert.ok(atLeast('critical', 'nit') && !atLeast('nit', 'minor'));
    });

    it('progress reads as stage and counts', () => {
      assert.equal(
        progressLine({ stage: 'verifying', counts: { found: 5, verified: 2, refuted: 1, unverified: 0 }, finders: { done: 3, total: 3 } }),
        'verifying — 5 found, 2 verified, 1 refuted',
      );
    });
  });
});
