import assert from 'node:assert/strict';
import {
  findKeywordTriggerPositions,
  findUltraplanTriggerPositions,
  findUltrareviewTriggerPositions,
  hasUltraplanKeyword,
  hasUltrareviewKeyword,
  replaceUltraplanKeyword,
} from '../../src/core/keyword';

// Each case is written with `W` standing for the word (in the case shown: W = lower, Wu = upper,
// Wt = title) and runs for both words, so both follow every rule. `triggers` lists the words
// expected to trigger, in order, as typed.
interface Case {
  rule: string;
  text: string;
  triggers: string[];
}

const cases: Case[] = [
  // plain invocations
  { rule: 'a lone word triggers', text: 'W', triggers: ['W'] },
  { rule: 'in a sentence', text: 'please W this refactor', triggers: ['W'] },
  { rule: 'at the start', text: 'W the migration to zod 4', triggers: ['W'] },
  { rule: 'at the end', text: 'do the migration, W', triggers: ['W'] },
  { rule: 'upper case', text: 'Wu the cache layer', triggers: ['Wu'] },
  { rule: 'title case', text: 'Wt: the cache layer', triggers: ['Wt'] },
  { rule: 'every occurrence reported', text: 'W this, then W that', triggers: ['W', 'W'] },
  { rule: 'sentence-ending period triggers', text: 'Please W.', triggers: ['W'] },
  { rule: 'comma triggers', text: 'W, then ship', triggers: ['W'] },
  { rule: 'exclamation triggers', text: 'W!', triggers: ['W'] },
  { rule: 'period then space triggers', text: 'Do W. Then stop.', triggers: ['W'] },
  { rule: 'ellipsis is not a file name', text: 'W... maybe', triggers: ['W'] },
  { rule: 'newline around it', text: 'first line\nW\nlast line', triggers: ['W'] },
  // slash command
  { rule: 'slash command never triggers', text: '/rename W foo', triggers: [] },
  { rule: 'a leading space is not a slash command', text: ' /x W', triggers: ['W'] },
  // whole word
  { rule: 'suffix letters: not a whole word', text: 'Wning the work', triggers: [] },
  { rule: 'prefix letters: not a whole word', text: 'superW it', triggers: [] },
  { rule: 'underscore joins words', text: 'W_mode on', triggers: [] },
  { rule: 'digit joins words', text: 'W2 please', triggers: [] },
  { rule: 'Unicode letter joins words', text: 'éW now', triggers: [] },
  { rule: 'Unicode letter after joins words', text: 'Wé now', triggers: [] },
  { rule: 'astral letter before joins words', text: '\u{1D400}W now', triggers: [] },
  { rule: 'emoji is not a word character', text: '\u{1F680}W now', triggers: ['W'] },
  // delimited spans
  { rule: 'inside backticks', text: 'run `W` now', triggers: [] },
  { rule: 'inside double quotes', text: 'the word "W" is special', triggers: [] },
  { rule: 'inside braces', text: 'config {mode: W}', triggers: [] },
  { rule: 'inside parentheses', text: 'the mode (W) exists', triggers: [] },
  { rule: 'inside brackets', text: 'see [W] docs', triggers: [] },
  { rule: 'inside a tag', text: 'the <W> element', triggers: [] },
  { rule: 'closing tag hides too', text: 'a </W> tag', triggers: [] },
  { rule: 'less-than before a space is a comparison', text: 'a < b and W > c', triggers: ['W'] },
  { rule: 'less-than before a digit is a comparison', text: 'x <3 W >', triggers: ['W'] },
  { rule: 'inside single quotes', text: "the 'W' mode", triggers: [] },
  { rule: 'apostrophes do not open a span', text: "let's W it's fine", triggers: ['W'] },
  { rule: 'closing quote must not precede a word char', text: "'W isn't it' ok", triggers: [] },
  { rule: 'quote after a word char does not open', text: "it's W", triggers: ['W'] },
  { rule: 'unclosed backtick hides nothing', text: 'run `W now', triggers: ['W'] },
  { rule: 'unclosed paren hides nothing', text: '(W and more', triggers: ['W'] },
  { rule: 'unclosed quote hides nothing', text: 'say "W', triggers: ['W'] },
  { rule: 'after a closed span it triggers', text: '`code` W', triggers: ['W'] },
  { rule: 'spans do not nest: paren inside quotes ignored', text: '"a (b" W )', triggers: ['W'] },
  { rule: 'other openers ignored while open', text: '(a "b) W "', triggers: ['W'] },
  { rule: 'new bracket restarts an open bracket span', text: '[a [b] W]', triggers: ['W'] },
  { rule: 'innermost bracket pair hides', text: '[a [W] b]', triggers: [] },
  { rule: 'only the quoted one is hidden', text: '"W" then W', triggers: ['W'] },
  // neighbours
  { rule: 'path before', text: 'open src/W now', triggers: [] },
  { rule: 'path after', text: 'open W/foo.ts', triggers: [] },
  { rule: 'backslash before', text: 'dir C:\\W now', triggers: [] },
  { rule: 'backslash after', text: 'dir W\\x now', triggers: [] },
  { rule: 'hyphen before', text: 'the pre-W step', triggers: [] },
  { rule: 'hyphen after', text: 'the W-mode flag', triggers: [] },
  { rule: 'question mark after', text: 'what is W?', triggers: [] },
  { rule: 'question mark later still triggers', text: 'W this, ok?', triggers: ['W'] },
  { rule: 'file name', text: 'edit W.tsx', triggers: [] },
  { rule: 'file name with digit extension', text: 'see W.2 notes', triggers: [] },
  { rule: 'colon after triggers', text: 'W: do it', triggers: ['W'] },
];

const WORDS = ['ultraplan', 'ultrareview'] as const;
const title = (w: string) => w[0]!.toUpperCase() + w.slice(1);

function render(template: string, word: string): string {
  return template.replace(/Wu|Wt|W/g, (m) => (m === 'Wu' ? word.toUpperCase() : m === 'Wt' ? title(word) : word));
}

const finders = {
  ultraplan: { find: findUltraplanTriggerPositions, has: hasUltraplanKeyword },
  ultrareview: { find: findUltrareviewTriggerPositions, has: hasUltrareviewKeyword },
};

describe('keyword trigger (docs/protocol.md section 7)', () => {
  for (const word of WORDS) {
    describe(word, () => {
      for (const c of cases) {
        const text = render(c.text, word);
        it(`${c.rule}: ${JSON.stringify(text)}`, () => {
          const found = finders[word].find(text);
          const expected = c.triggers.map((t) => render(t, word));
          assert.deepEqual(
            found.map((t) => t.word),
            expected,
          );
          // Positions point at the word as typed.
          for (const t of found) assert.equal(text.slice(t.start, t.end), t.word);
          assert.equal(finders[word].has(text), expected.length > 0);
        });
      }
    });
  }

  it('the two words do not trigger each other', () => {
    assert.equal(hasUltraplanKeyword('ultrareview this'), false);
    assert.equal(hasUltrareviewKeyword('ultraplan this'), false);
  });

  it('reports exact positions', () => {
    assert.deepEqual(findUltraplanTriggerPositions('go UltraPlan, now'), [{ word: 'UltraPlan', start: 3, end: 12 }]);
    assert.deepEqual(findUltrareviewTriggerPositions('x ultrareview'), [{ word: 'ultrareview', start: 2, end: 13 }]);
  });

  it('the shared finder treats regex characters in a word literally', () => {
    assert.deepEqual(findKeywordTriggerPositions('a c.d b', 'c.d').length, 1);
    assert.deepEqual(findKeywordTriggerPositions('a cxd b', 'c.d').length, 0);
  });

  describe('replaceUltraplanKeyword', () => {
    const replacements: Array<[string, string, string]> = [
      ['lower case', 'please ultraplan this', 'please plan this'],
      ['upper case keeps case', 'ULTRAPLAN the cache', 'PLAN the cache'],
      ['mixed case keeps case', 'UltraPlan the cache', 'Plan the cache'],
      ['title case loses its capital with the prefix', 'Ultraplan: the cache', 'plan: the cache'],
      ['only the first trigger', 'ultraplan and ultraplan again', 'plan and ultraplan again'],
      ['first trigger, not a hidden one', '`ultraplan` then ultraplan it', '`ultraplan` then plan it'],
      ['lone word gives empty', 'ultraplan', ''],
      ['blank rest gives empty', '  ultraplan \n', ''],
      ['punctuation is not blank', 'ultraplan!', 'plan!'],
      ['no trigger: unchanged', 'what is ultraplan?', 'what is ultraplan?'],
      ['slash command unchanged', '/ultraplan foo', '/ultraplan foo'],
      ['no keyword unchanged', 'plain prompt', 'plain prompt'],
    ];
    for (const [rule, input, output] of replacements) {
      it(`${rule}: ${JSON.stringify(input)}`, () => assert.equal(replaceUltraplanKeyword(input), output));
    }
  });
});
