import assert from 'node:assert/strict';
import {
  CHAT_USAGE,
  REFINE_PLAN_MAX_CHARS,
  ULTRAREVIEW_HINT,
  chatRequestAction,
  keywordHints,
  planTitle,
  promptFromText,
  refinePlanPrompt,
} from '../../src/core/promptPath';

describe('the prompt path from the terminal', () => {
  describe('@ultraplan chat requests', () => {
    it('addressing the participant launches the task as typed', () => {
      assert.deepEqual(chatRequestAction('  add rate limiting to the API '), { kind: 'launch', prompt: 'add rate limiting to the API' });
    });

    it('the keyword is replaced as in the terminal (section 7), case kept', () => {
      assert.deepEqual(chatRequestAction('ULTRAPLAN the auth migration'), { kind: 'launch', prompt: 'PLAN the auth migration' });
      assert.deepEqual(chatRequestAction('please ultraplan this: move to JWTs'), {
        kind: 'launch',
        prompt: 'please plan this: move to JWTs',
      });
    });

    it('a keyword that is not an invocation is left as typed', () => {
      assert.deepEqual(chatRequestAction('explain `ultraplan` to me'), { kind: 'launch', prompt: 'explain `ultraplan` to me' });
    });

    it('ultrareview alone starts a review of the changes, not a planning session', () => {
      assert.deepEqual(chatRequestAction('ultrareview my branch'), { kind: 'review', message: ULTRAREVIEW_HINT });
      // with the launch keyword too, it is a launch
      assert.equal(chatRequestAction('ultraplan then ultrareview').kind, 'launch');
      // quoted, it is talk about the word, not a request for a review
      assert.equal(chatRequestAction('what does "ultrareview" do').kind, 'launch');
    });

    it('empty, or only the keyword: says how to use it', () => {
      assert.deepEqual(chatRequestAction('   '), { kind: 'usage', message: CHAT_USAGE });
      const only = chatRequestAction('ultraplan');
      assert.equal(only.kind, 'usage');
      assert.match(only.kind === 'usage' ? only.message : '', /^Only the keyword/);
    });
  });

  describe('hints while typing', () => {
    it('names what the agent receives, and the ultrareview hint', () => {
      assert.deepEqual(keywordHints(''), []);
      assert.deepEqual(keywordHints('add a flag'), []);
      assert.deepEqual(keywordHints('ultraplan add a flag'), ['"ultraplan" is the launch keyword; the agent receives: plan add a flag']);
      assert.deepEqual(keywordHints('ultrareview it'), [ULTRAREVIEW_HINT]);
      assert.equal(keywordHints(`ultraplan ${'x'.repeat(200)}`, 40)[0]?.endsWith('…'), true);
      assert.equal(promptFromText('  UltraPlan it  '), 'Plan it');
    });
  });

  describe('Refine Plan', () => {
    const plan = '# Plan: add a changelog\n\n1. Add CHANGELOG.md.\n2. Link it from README.md.\n';

    it('seeds the session with the plan as the draft, named on the first line', () => {
      const input = refinePlanPrompt(plan, '.ultraplan/plans/2026-01-02-add-a-changelog.md');
      assert.equal(input.ok, true);
      const prompt = input.ok ? input.prompt : '';
      assert.equal(prompt.split('\n')[0], 'Refine the plan "add a changelog".');
      assert.match(
        prompt,
        /The draft below \(from \.ultraplan\/plans\/2026-01-02-add-a-changelog\.md\) is a starting point, not a settled decision/,
      );
      assert.match(
        prompt,
        /<draft-plan>\n# Plan: add a changelog\n\n1\. Add CHANGELOG\.md\.\n2\. Link it from README\.md\.\n<\/draft-plan>$/,
      );
    });

    it('normalises CRLF; refuses an empty or an oversized plan with the reason', () => {
      const crlf = refinePlanPrompt('# T\r\n\r\nstep\r\n', 'x.md');
      assert.ok(crlf.ok && !crlf.prompt.includes('\r'));
      assert.deepEqual(refinePlanPrompt('  \n ', 'the editor'), { ok: false, message: 'the editor is empty: there is no plan to refine.' });
      const big = refinePlanPrompt('x'.repeat(REFINE_PLAN_MAX_CHARS + 1), 'big.md');
      assert.equal(big.ok, false);
      assert.match(big.ok ? '' : big.message, /big\.md has 200,001 characters; plans up to 200,000/);
    });

    it('the plan title: its first heading without "Plan:", else its first line, shortened', () => {
      assert.equal(planTitle('intro\n## Plan: Move auth to JWTs\n'), 'Move auth to JWTs');
      assert.equal(planTitle('\n\nJust steps\n1. a'), 'Just steps');
      assert.equal(planTitle(''), 'plan');
      assert.equal(planTitle(`# ${'w'.repeat(100)}`).length, 70);
    });
  });
});
