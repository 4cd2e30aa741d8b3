// The first plan a freshly loaded panel renders runs markdown-it, DOMPurify and the line index as
// cold code: V8 interprets it until it has run often enough to be compiled, and a 2,000-line plan
// then takes two to three times as long as the same plan rendered a second time. The panel is
// usually open while the agent plans, long before the plan arrives, so it renders a small sample
// plan of its own a few times in idle time and the person's plan meets compiled code. The first
// passes also lay the sample out, hidden, where the plan goes: the first layout of code spans,
// headings and lists (font matching, text shaping) is as slow the first time. The sample goes
// through the same path as a plan (render, sanitize, index); nothing of it is painted or kept.
import { PlanBlockIndex } from './lineComments';
import { renderPlanMarkdown } from './planMarkdown';

/** One section of a plan, with what plans hold: headings, prose, lists, code, links, emphasis, a table. */
function sampleSection(n: number): string {
  return [
    `## ${n}. Update the settings module`,
    '',
    `This step changes \`src/settings${n}.ts\` and its tests; see https://example.com/docs/${n} and [the guide](https://example.com/guide).`,
    '',
    `1. Edit **readTheme** in \`src/settings${n}/read.ts\` so it reads the *new* field.`,
    `2. Add a case to \`test/settings${n}.test.ts\`.`,
    '   - keep the old field for one release',
    '   - [ ] check the migration',
    '',
    '```ts',
    `export function readTheme${n}(input: Settings): Theme {`,
    '  return input.theme ?? "light";',
    '}',
    '```',
    '',
    '> Risk: low; rollback by reverting the commit.',
    '',
    '| file | change |',
    '| ---- | ------ |',
    `| src/settings${n}.ts | reads the field |`,
    '',
    '---',
    '',
  ].join('\n');
}

/** A sample plan of about `sections` × 22 lines. */
export function warmUpSample(sections: number): string {
  const parts = ['# Plan: migrate the settings store', ''];
  for (let n = 1; n <= sections; n++) parts.push(sampleSection(n));
  return parts.join('\n');
}

/** Passes and their size: enough for V8 to compile the hot paths, each pass a short task. */
export const WARM_UP_PASSES = 10;
const WARM_UP_SECTIONS = 10;

/** Passes that also lay the sample out. */
const LAID_OUT_PASSES = 2;

/**
 * Renders the sample once: the plan's whole path. With `layOut`, the sample is attached hidden
 * (visibility: hidden, out of the accessibility tree, inert), laid out, and removed before any
 * frame could paint it.
 */
export function warmUpOnce(layOut = false): number {
  const root = document.createElement('div');
  root.className = 'plan markdown plan-warm-up';
  root.setAttribute('aria-hidden', 'true');
  root.inert = true;
  const sample = warmUpSample(WARM_UP_SECTIONS);
  root.append(renderPlanMarkdown(sample));
  const blocks = new PlanBlockIndex(root, sample).blocks.length;
  if (layOut) {
    document.body.append(root);
    root.getBoundingClientRect();
    root.remove();
  }
  return blocks;
}

/**
 * Runs the passes in idle time, one per idle period, so a message from the host is never kept
 * waiting by more than one short pass. Stops early once `done()` says a real plan was rendered.
 */
export function scheduleWarmUp(done: () => boolean, passes = WARM_UP_PASSES): void {
  const idle: (callback: () => void) => void =
    typeof requestIdleCallback === 'function'
      ? (callback) => requestIdleCallback(callback, { timeout: 2_000 })
      : (callback) => setTimeout(callback, 50);
  let left = passes;
  const pass = () => {
    if (left <= 0 || done()) return;
    left--;
    const start = performance.now();
    warmUpOnce(passes - left <= LAID_OUT_PASSES);
    // Visible in a performance trace, and to bench/panel.bench.ts.
    performance.measure('ultraplan:warm-up', { start, end: performance.now() });
    idle(pass);
  };
  idle(pass);
}
