// The review panel in real Chromium: time from a plan state arriving in the webview (postMessage,
// as VS Code delivers it) to the next painted frame, for a 2,000-line plan (and a 5,000-line one).
// Ours: validate with zod, render markdown-it, sanitize with DOMPurify, index the source-line
// blocks. Baseline, same run, same browser: the same message shown as plain text
// (pre.textContent), the least a panel could do. For 2,000 lines also the first plan of a freshly
// loaded panel (cold code, but for what the panel warms in idle time: src/webview/renderWarmUp.ts),
// which is what the editor shows first. Also the webview bundle's size.
// Before/after in one run: with ULTRAPLAN_BENCH_BEFORE=<git ref>, the webview of that commit is
// built too (its src/ and media/ from git, bundled as esbuild.mjs does) and measured in the same
// browser beside this tree's, each sent the messages its own host side sends: a state update on
// the plan shown (a notice) -> painted, what each message weighs, and what setState holds after
// typing feedback.
import * as esbuild from 'esbuild';
import { startChecklist } from '../src/core/execution/startChecklist';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { parseEventBatch } from '../src/core/eventBatch';
import { planHash } from '../src/core/decision';
import { progressEvent } from '../src/core/execution';
import { splitPlanTexts, type PanelState } from '../src/core/panelMessages';
import { SessionModel } from '../src/core/sessionModel';
import { TEST_IDENTITY, approve, exitPlan } from '../test/support/sessionEvents';
import { launchChromium, openPanel, panelState, revision, startPanelServer, REPO_ROOT, type PanelPage } from '../test/webview/panelPage';
import { bigPlan, updates } from './execution.bench';
import { repeat, result, timeMs, type BenchResult } from './measure';

export const title = 'Review panel: plan state arriving -> painted, in Chromium (median of 7)';

const RUNS = 7;
/** How long a fresh panel is open before its first plan arrives (the agent planning). */
const FIRST_PLAN_AFTER_MS = 1_000;

/** A plan shaped like a real one: sections of prose, numbered steps with code spans, code blocks, links. */
export function generatePlan(lines: number, seed: number): string {
  const out: string[] = [`# Plan ${seed}: migrate the settings store`, ''];
  let section = 0;
  while (out.length < lines) {
    section++;
    out.push(
      `## ${section}. Update module ${section}`,
      '',
      `This section changes \`src/module${section}.ts\` and its tests; see https://example.com/docs/${section}.`,
      '',
    );
    for (let step = 1; step <= 6; step++)
      out.push(`${step}. Edit **function${step}** in \`src/module${section}/file${step}.ts\` so it reads the new field (${seed}).`);
    out.push(
      '',
      '```ts',
      `export function function${section}(input: Settings): Theme {`,
      '  return input.theme ?? "light";',
      '}',
      '```',
      '',
    );
    out.push(`- [ ] Check ${section}: run \`npm test -- module${section}\``, `- Risk: *low*; rollback by reverting the commit.`, '');
  }
  return out.slice(0, lines).join('\n');
}

interface Timing {
  ms: number;
}

/** The state message as this tree's host sends it to a page that has no text yet. */
function firstMessage(state: PanelState): unknown {
  return splitPlanTexts(state, new Set()).message;
}

/** In the page: post the message, and after the view's own listener ran, wait for the frame to paint. */
async function timeStateToPaint(page: Page, message: unknown): Promise<number> {
  const timing = await page.evaluate(
    (s) =>
      new Promise<Timing>((resolve) => {
        const start = performance.now();
        // Registered after the view's listener, so it runs once the view has rendered synchronously.
        const after = () => {
          window.removeEventListener('message', after);
          // rAF runs before the next paint; the timeout after it runs once that frame is out.
          requestAnimationFrame(() => setTimeout(() => resolve({ ms: performance.now() - start }), 0));
        };
        window.addEventListener('message', after);
        window.postMessage(s, '*');
      }),
    message,
  );
  return timing.ms;
}

async function timeTextToPaint(page: Page, plan: string): Promise<number> {
  const timing = await page.evaluate(
    (text) =>
      new Promise<Timing>((resolve) => {
        const pre = document.getElementById('baseline') ?? document.body.appendChild(document.createElement('pre'));
        pre.id = 'baseline';
        const start = performance.now();
        const onMessage = (event: MessageEvent) => {
          window.removeEventListener('message', onMessage);
          pre.textContent = (event.data as { plan: string }).plan;
          requestAnimationFrame(() => setTimeout(() => resolve({ ms: performance.now() - start }), 0));
        };
        window.addEventListener('message', onMessage);
        window.postMessage({ type: 'plain', plan: text }, '*');
      }),
    plan,
  );
  return timing.ms;
}

async function bundleSizes(): Promise<{ built: number; minified: number; gzip: number }> {
  const built = statSync(path.join(REPO_ROOT, 'dist', 'webview.js')).size;
  const output = await esbuild.build({
    entryPoints: [path.join(REPO_ROOT, 'src', 'webview', 'main.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: true,
    write: false,
    outdir: 'out',
    loader: { '.ttf': 'file' },
    logLevel: 'silent',
  });
  const js = output.outputFiles.find((f) => f.path.endsWith('.js'));
  if (!js) throw new Error('esbuild produced no js');
  return { built, minified: js.contents.length, gzip: gzipSync(js.contents).length };
}

/**
 * The approved plan's checklist (docs/execution.md): one poll's progress events (a todo list and a
 * file touch) through the session model (fold, snapshot, panel projection) and the host's state
 * message, to the frame that shows the checklist, for a 400-step plan after 1,000 updates.
 */
export async function progressToPaintedChecklist(panel: PanelPage): Promise<BenchResult> {
  const { text, stepTexts } = bigPlan();
  const facts = updates(stepTexts);
  const hash = planHash(text);
  const model = new SessionModel({
    identity: TEST_IDENTITY,
    initialPhase: 'planning',
    cursor: null,
    at: 0,
    planSteps: () => startChecklist,
  });
  let cursor = 0;
  const poll = (raw: unknown[]) => {
    const batch = parseEventBatch(raw);
    model.scanner.ingestParsed(batch);
    model.reduce({ type: 'poll', poll: { batch, status: 'running', cursor: `c${++cursor}` }, at: cursor });
  };
  poll([exitPlan('toolu_exec', text), approve('toolu_exec', text)]);
  poll(facts.slice(0, 1_000).map((fact) => progressEvent(hash, fact)));
  let sent = new Set<string>();
  const message = () => {
    const split = splitPlanTexts(model.snapshot.panel, sent);
    sent = split.has;
    return split.message;
  };
  await timeStateToPaint(panel.page, message());
  let next = 1_000;
  const samples = await repeat(
    RUNS,
    async () => {
      let state: unknown;
      const host = await timeMs(() => {
        poll([progressEvent(hash, facts[next++]!), progressEvent(hash, facts[next++]!)]);
        state = message();
      });
      return host + (await timeStateToPaint(panel.page, state));
    },
    1,
  );
  const steps = await panel.page.locator('.execution-step').count();
  if (steps !== stepTexts.length) throw new Error(`painted ${steps} steps, expected ${stepTexts.length}`);
  return result('progress events -> painted checklist (400 steps)', 'ms', 'lower', samples, {
    note: 'one poll (a todo list + a file touch): fold, snapshot, projection, state message, webview render, paint; the issue bounds it at 50 ms',
  });
}

export async function run(): Promise<BenchResult[]> {
  const server = await startPanelServer();
  const browser = await launchChromium();
  const results: BenchResult[] = [];
  try {
    const panel = await openPanel(browser, server);
    const plain = await browser.newPage();
    await plain.setContent('<!DOCTYPE html><html><body></body></html>');
    // tsx names functions with a __name helper that page.evaluate callbacks carry along.
    await plain.evaluate('window.__name = (fn) => fn');
    let firstPlan: number[] = [];
    for (const lines of [2_000, 5_000]) {
      let n = 0;
      const nextState = () => {
        n++;
        // A new revision each run, so the view cannot reuse the previous render.
        return panelState([revision(1, generatePlan(lines, n), { toolUseId: `toolu_${lines}_${n}` })], {
          sessionKey: `bench:${lines}:${n}`,
        });
      };
      if (lines === 2_000) {
        // The first plan a panel shows, as in the editor: the panel opens when planning starts and
        // has been idle for a while (the agent plans) when the plan arrives. A fresh page each time.
        const first = await repeat(RUNS, async () => {
          const fresh = await openPanel(browser, server);
          try {
            await fresh.page.waitForTimeout(FIRST_PLAN_AFTER_MS);
            return await timeStateToPaint(fresh.page, firstMessage(nextState()));
          } finally {
            await fresh.close();
          }
        });
        firstPlan = first;
      }
      const ours = await repeat(RUNS, () => timeStateToPaint(panel.page, firstMessage(nextState())), 1);
      const rendered = await panel.page.locator('#plan [data-ls]').count();
      const baseline = await repeat(RUNS, () => timeTextToPaint(plain, generatePlan(lines, ++n)), 1);
      const baseName = `${lines} lines: plain textContent (baseline)`;
      results.push(result(baseName, 'ms', 'lower', baseline, { note: 'same message shown as plain text in a <pre>' }));
      results.push(
        result(`${lines} lines: review panel`, 'ms', 'lower', ours, {
          baseline: baseName,
          note: `zod validation + markdown-it + DOMPurify + line index; ${rendered} commentable blocks; one panel, a new plan each time`,
        }),
      );
      if (lines === 2_000 && firstPlan.length > 0)
        results.push(
          result(`${lines} lines: review panel, its first plan`, 'ms', 'lower', firstPlan, {
            baseline: baseName,
            note: `a freshly loaded panel, idle for ${FIRST_PLAN_AFTER_MS / 1000} s (its render path warmed in that idle time), then the plan`,
          }),
        );
    }
    results.push(await progressToPaintedChecklist(panel));
    await panel.close();
    const before = process.env.ULTRAPLAN_BENCH_BEFORE;
    if (before) results.push(...(await beforeAndAfter(browser, before)));
    const sizes = await bundleSizes();
    results.push(
      result('dist/webview.js as built', 'KB', 'lower', [sizes.built / 1024], { note: 'npm run build (not minified, sourcemap linked)' }),
    );
    results.push(result('webview.js minified', 'KB', 'lower', [sizes.minified / 1024]));
    results.push(result('webview.js minified + gzip', 'KB', 'lower', [sizes.gzip / 1024]));
  } finally {
    await browser.close();
    await server.close();
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Before/after: this tree's webview beside the one of another commit, in the same browser.

/** Builds the webview of `ref` (its src/ and media/ from git) as esbuild.mjs does; returns its dist folder. */
async function buildWebviewAt(ref: string, into: string): Promise<string> {
  const tar = execFileSync('git', ['-C', REPO_ROOT, 'archive', '--format=tar', ref, 'src', 'media'], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', into], { input: tar });
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(into, 'node_modules'));
  const dist = path.join(into, 'dist');
  await esbuild.build({
    entryPoints: { webview: path.join(into, 'src', 'webview', 'main.ts') },
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    outdir: dist,
    loader: { '.ttf': 'file' },
    assetNames: '[name]',
    logLevel: 'silent',
  });
  return dist;
}

interface Variant {
  name: string;
  dist: string | undefined;
  /** The messages its host side sends for `states` in turn, to one page. */
  messages(states: PanelState[]): unknown[];
}

const KB = (value: unknown) => Buffer.byteLength(JSON.stringify(value)) / 1024;

async function beforeAndAfter(browser: Browser, ref: string): Promise<BenchResult[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ultraplan-bench-panel-before-'));
  const results: BenchResult[] = [];
  try {
    const variants: Variant[] = [
      {
        name: `before (${ref})`,
        dist: await buildWebviewAt(ref, dir),
        messages: (states) => states.map((state) => ({ type: 'state', state })),
      },
      {
        name: 'after (this tree)',
        dist: undefined,
        messages: (states) => {
          let sent: ReadonlySet<string> = new Set();
          return states.map((state) => {
            const { message, has } = splitPlanTexts(state, sent);
            sent = has;
            return message;
          });
        },
      },
    ];
    const lines = 2_000;
    const v1 = generatePlan(lines, 1);
    const v2 = generatePlan(lines, 2);
    const shown = panelState([revision(1, v1)]);
    const updated = { ...shown, notice: { level: 'info' as const, text: 'The agent is still connected.' } };
    const second = panelState([revision(1, v1, { status: 'rejected', feedback: 'Split it.' }), revision(2, v2)]);
    const servers = await Promise.all(variants.map((v) => startPanelServer(v.dist)));
    try {
      const messages = variants.map((v) => v.messages([shown, updated, second]));
      const timed = variants.map(() => ({ arrival: [] as number[], revision2: [] as number[], update: [] as number[] }));
      const panels = await Promise.all(servers.map((server) => openPanel(browser, server)));
      // Samples alternate between the variants (and which goes first), so a busy moment of the
      // machine falls on both.
      for (let run = 0; run <= RUNS; run++) {
        const order = run % 2 === 0 ? [0, 1] : [1, 0];
        for (const v of order) {
          const variant = variants[v]!;
          const [shownMessage, updateMessage, secondMessage] = messages[v]!;
          const sample = timed[v]!;
          // A new plan (another session each time, as the measure above) -> painted, in one panel.
          const state = panelState([revision(1, generatePlan(lines, 100 + run), { toolUseId: `toolu_before_after_${run}` })], {
            sessionKey: `bench:before-after:${run}`,
          });
          const arrival = await timeStateToPaint(panels[v]!.page, variant.messages([state])[0]);
          // Revision 2 after a rejection of revision 1, and a state update (a notice) on the plan shown.
          const fresh = await openPanel(browser, servers[v]!);
          let revision2: number;
          let update: number;
          try {
            await timeStateToPaint(fresh.page, shownMessage);
            update = await timeStateToPaint(fresh.page, updateMessage);
            revision2 = await timeStateToPaint(fresh.page, secondMessage);
          } finally {
            await fresh.close();
          }
          // The first round warms both pages up and is not counted.
          if (run === 0) continue;
          sample.arrival.push(arrival);
          sample.revision2.push(revision2);
          sample.update.push(update);
        }
      }
      await Promise.all(panels.map((panel) => panel.close()));
      for (const [v, variant] of variants.entries()) {
        const [shownMessage, updateMessage, secondMessage] = messages[v]!;
        // Typing feedback: what setState holds once the draft is saved.
        const panel = await openPanel(browser, servers[v]!);
        let saved: number;
        try {
          await timeStateToPaint(panel.page, shownMessage);
          await panel.page.locator('#feedback').pressSequentially('Split the migration into two steps.');
          await panel.page.waitForFunction(() => JSON.stringify(window.__saved ?? '').includes('two steps'), undefined, { timeout: 5_000 });
          saved = KB(await panel.saved());
        } finally {
          await panel.close();
        }
        const sample = timed[v]!;
        const entries: Array<[string, string, number[], string]> = [
          [
            'a new plan -> painted',
            'ms',
            sample.arrival,
            'a new session and plan each time, one panel; samples alternate with the other variant',
          ],
          ['revision 2 after a rejection -> painted', 'ms', sample.revision2, 'the state with revision 1 rejected and revision 2 pending'],
          ['a state update on the plan shown -> painted', 'ms', sample.update, 'a notice added to the state of the plan shown'],
          ['state message of the first plan', 'KB', [KB(shownMessage)], 'JSON size'],
          ['state message of an update on that plan', 'KB', [KB(updateMessage)], 'JSON size'],
          ['state message of revision 2 (after a rejection)', 'KB', [KB(secondMessage)], 'JSON size'],
          ['setState after typing feedback', 'KB', [saved], 'what the webview saves with vscode.setState'],
        ];
        for (const [what, unit, samples, note] of entries) {
          const options: { note: string; baseline?: string } = { note };
          if (v > 0) options.baseline = `${lines} lines, ${what}: ${variants[0]?.name}`;
          results.push(result(`${lines} lines, ${what}: ${variant.name}`, unit, 'lower', samples, options));
        }
      }
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
