// The extension as a person gets it, in real code-server 4.100.3 + Chromium:
// 1. Activation: `await extension.activate()` timed inside the extension host (the runner
//    extension's activateTimed probe, performance.now()) from not yet active, one sample per fresh
//    window. Baseline in the same windows: an empty extension (activate() does nothing), i.e. what
//    the extension host itself costs. The activation order alternates between windows.
// 2. A 2,000-line plan arriving -> painted in the review panel, through the real extension on the
//    server backend: from the moment the ExitPlanMode event shows up in the server's event stream
//    (this process subscribes to it, as the extension does) to the frame after the panel's DOM holds
//    the plan's last line (MutationObserver in the webview, then rAF + a task, as panel.bench.ts
//    does in bare Chromium). Node and webview clocks are related by the ping with the shortest round
//    trip; half of it is the error bound, printed in the note.
// 3. Bundle sizes, raw and gzip, production build vs dev build, both built by esbuild.mjs itself
//    into temp folders from the same sources.
// With ULTRAPLAN_BENCH_BEFORE=<another checkout> (e.g. a worktree at an earlier commit), that
// checkout's production build is measured in the same run: its sizes, and its activation in
// windows that alternate with ours.
// The windows install the production build. A window without an Ultraplan command run first also
// tells whether the extension activated on its own at startup.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createParser } from 'eventsource-parser';
import type { Frame } from 'playwright-core';
import { answerInputBox, findWebviewFrame, runCommand, waitFor, type CodeServer } from '../test/e2e/harness';
import { listSessions } from '../test/e2e/ultraplanSteps';
import { startServer, type ServerProcess } from '../test/support/serverProcess';
import {
  clockOffset,
  findExtensionHostLogLine,
  findUltraplanLogLine,
  logLineTime,
  now,
  openStagedWindow,
  type StagedWindow,
} from './codeServerWindow';
import {
  BASELINE_EXTENSION_ID,
  EXTENSION_ID,
  buildBundles,
  bundleSizes,
  readManifest,
  stageBaselineExtension,
  stageExtension,
  tempRoot,
  type TempRoot,
} from './extensionStaging';
import { result, type BenchResult } from './measure';
import { generatePlan } from './panel.bench';

export const title = 'Extension in code-server 4.100.3: activation, 2,000-line plan -> painted in the panel, bundle sizes';

/** Fresh windows (about 15 s each); one activation sample and one paint sample per window. */
const WINDOWS = 5;
const PLAN_LINES = 2_000;
const SUITE = 'bench-extension';
/** The scripted agent waits this long before its plan, so the bench can subscribe and watch first. */
const AGENT_PAUSE_MS = 3_500;
const STARTUP_SETTLE_MS = 2_000;
/** Another checkout to measure in the same run (before a change), or undefined. */
const BEFORE = process.env.ULTRAPLAN_BENCH_BEFORE ? path.resolve(process.env.ULTRAPLAN_BENCH_BEFORE) : undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the extension is active once startup has finished and settled, with no command run. */
async function activeAfterStartup(server: CodeServer, id: string): Promise<boolean> {
  // The probe answers from the runner extension, itself activated by onStartupFinished; give
  // the other onStartupFinished activations time to finish too.
  await sleep(STARTUP_SETTLE_MS);
  const state = await server.probe.extension(id);
  if (!state.present) throw new Error(`${id} is not installed in the bench window`);
  return state.isActive;
}

/** What the extension host logged as the activation event of `id` ("onStartupFinished", ...). */
function loggedActivationEvent(server: CodeServer, id: string): string | undefined {
  const line = findExtensionHostLogLine(server, 'remoteexthost.log', `_doActivateExtension ${id},`);
  return (line && /activationEvent: '([^']*)'/.exec(line)?.[1]) || undefined;
}

/**
 * When (this process's clock) the session controller logged its phase change `<previous> -> plan_ready`
 * to its LogOutputChannel: VS Code stamps log lines with the wall clock to the millisecond. The
 * window follows one session, so the first such line is this plan's.
 */
async function loggedPlanReadyAt(server: CodeServer): Promise<number> {
  const line = await waitFor(() => findUltraplanLogLine(server, ' -> plan_ready'), {
    timeoutMs: 10_000,
    message: "the extension's plan_ready log line",
  });
  return logLineTime(line);
}

// ---------------------------------------------------------------------------------------------
// Plan arrival -> paint

function scenarioWithPlan(plan: string): unknown {
  return {
    title: 'Bench: a 2,000-line plan',
    steps: [{ say: 'Reading the settings store.' }, { sleep: AGENT_PAUSE_MS }, { plan }],
    onApprove: [{ say: 'Done.' }],
  };
}

/**
 * Subscribes to the session's event stream and resolves with the moment (this process's clock)
 * the ExitPlanMode tool_use arrives. Rejects when that event comes in the backlog sent at
 * connection (then the moment would be late, not the append).
 */
async function watchForExitPlan(
  server: ServerProcess,
  sessionId: string,
  signal: AbortSignal,
): Promise<{ connectedAt: number; arrived: Promise<{ at: number; toolUseId: string }> }> {
  const response = await fetch(`${server.url}/v1/sessions/${encodeURIComponent(sessionId)}/events/stream`, {
    headers: server.headers(),
    signal,
  });
  if (!response.ok || !response.body) throw new Error(`event stream: HTTP ${response.status}`);
  const connectedAt = now();
  const body = response.body;
  const arrived = new Promise<{ at: number; toolUseId: string }>((resolve, reject) => {
    let done = false;
    const parser = createParser({
      onEvent(event) {
        if (done || event.event === 'status') return;
        const at = now();
        const parsed = JSON.parse(event.data) as { type?: string; message?: { content?: unknown } };
        const blocks =
          parsed.type === 'assistant' && Array.isArray(parsed.message?.content)
            ? (parsed.message.content as Array<{ type?: string; name?: string; id?: unknown }>)
            : [];
        const exitPlan = blocks.find((b) => b.type === 'tool_use' && b.name === 'ExitPlanMode');
        if (!exitPlan) return;
        done = true;
        if (at - connectedAt < AGENT_PAUSE_MS / 10)
          reject(new Error('the plan was already in the backlog when the bench subscribed; no arrival time'));
        else resolve({ at, toolUseId: String(exitPlan.id) });
      },
    });
    void (async () => {
      const decoder = new TextDecoder();
      const reader = body.getReader();
      try {
        // Ends when the plan arrived, the stream ends or the signal aborts the fetch.
        while (!done) {
          const chunk = await reader.read();
          if (chunk.done) break;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
        if (!done) reject(new Error('the event stream ended before the plan arrived'));
      } catch (err) {
        if (!done) reject(err instanceof Error ? err : new Error(String(err)));
      }
    })();
  });
  arrived.catch(() => undefined);
  return { connectedAt, arrived };
}

/** In the webview: resolves with when the frame after the DOM first holds `marker` was painted. */
function installPaintWatch(frame: Frame, marker: string): Promise<unknown> {
  // A string, not a function: tsx's __name helper would not exist in the webview.
  return frame.evaluate(`(() => {
    const marker = ${JSON.stringify(marker)};
    const plan = () => document.getElementById('plan');
    if (!plan()) throw new Error('the review panel has no #plan');
    if ((plan().textContent || '').includes(marker)) return 'already there';
    window.__ultraplanBenchPaint = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (!(plan()?.textContent || '').includes(marker)) return;
        observer.disconnect();
        const domAt = performance.timeOrigin + performance.now();
        window.__ultraplanBenchDomAt = domAt;
        requestAnimationFrame(() => setTimeout(() => resolve({ domAt, paintAt: performance.timeOrigin + performance.now() }), 0));
      });
      observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    return 'watching';
  })()`);
}

interface PaintSample {
  ms: number;
  domMs: number;
  /** The panel's own marks around the message that showed the plan: when it arrived, and its handling. */
  receivedMs: number;
  handleMs: number;
  /** The same text set as plain text in the same frame, to the next painted frame. */
  plainMs: number;
  /** To the extension's `phase plan_ready` log line (millisecond stamps). */
  hostMs: number;
  errorMs: number;
  blocks: number;
}

async function planArrivalToPaint(window: StagedWindow, server: ServerProcess, marker: string): Promise<PaintSample> {
  const { page } = window;
  const abort = new AbortController();
  try {
    await runCommand(page, 'Ultraplan: Set Server Token…');
    await answerInputBox(page, server.token ?? '');
    await runCommand(page, 'Ultraplan: Plan a Task…');
    await answerInputBox(page, 'bench: plan the settings store migration');
    const session = await waitFor(async () => (await listSessions(server))[0], {
      timeoutMs: 30_000,
      intervalMs: 50,
      message: 'the session on the server',
    });
    const { arrived } = await watchForExitPlan(server, session.id, abort.signal);
    const frame = await findWebviewFrame(page, '#plan', { timeoutMs: 30_000 });
    const installed = await installPaintWatch(frame, marker);
    if (installed !== 'watching') throw new Error(`the paint watch was installed too late (${String(installed)})`);
    const clock = await clockOffset(frame);
    const paintedAt = Promise.race([
      frame.evaluate('window.__ultraplanBenchPaint') as Promise<{ domAt: number; paintAt: number }>,
      sleep(AGENT_PAUSE_MS + 60_000).then(() => {
        throw new Error('the plan was not painted within a minute');
      }),
    ]);
    const [arrival, painted] = await Promise.all([arrived, paintedAt]);
    const t0 = arrival.at;
    const blocks = await frame.locator('#plan [data-ls]').count();
    const ms = painted.paintAt - clock.offset - t0;
    if (!(ms > 0)) throw new Error(`negative arrival -> paint time (${ms} ms): the clocks disagree`);
    const hostMs = (await loggedPlanReadyAt(window.server)) - t0;
    // The last message handled before the DOM held the plan is the one that showed it.
    const marks = (await frame.evaluate(`(() => {
      const at = (m) => performance.timeOrigin + m.startTime;
      const received = performance.getEntriesByName('ultraplan:received').map(at);
      const shown = performance.getEntriesByName('ultraplan:shown').map(at);
      // The observer runs right after the handler that changed the DOM: the last one before it.
      let i = -1;
      shown.forEach((t, k) => { if (t <= window.__ultraplanBenchDomAt + 0.5) i = k; });
      return { received: received[i], shown: shown[i] };
    })()`)) as { received?: number; shown?: number };
    if (marks.received === undefined || marks.shown === undefined)
      throw new Error('the panel left no marks around the message that showed the plan');
    // Baseline in the same frame: the same text as plain text in a <pre>, to the next painted frame.
    const plainMs = (await frame.evaluate(`new Promise((resolve) => {
      const text = document.getElementById('plan').textContent;
      const pre = document.createElement('pre');
      const start = performance.now();
      pre.textContent = text;
      document.body.append(pre);
      requestAnimationFrame(() => setTimeout(() => { resolve(performance.now() - start); pre.remove(); }, 0));
    })`)) as number;
    const receivedMs = marks.received - clock.offset - t0;
    return {
      ms,
      domMs: painted.domAt - clock.offset - t0,
      receivedMs,
      handleMs: marks.shown - marks.received,
      plainMs,
      hostMs,
      errorMs: clock.errorMs,
      blocks,
    };
  } finally {
    abort.abort();
  }
}

/** One fresh window with `folder` staged as the extension: its activation from inactive, in ms. */
async function timeActivation(folder: string, version: string, baseline: { id: string; version: string; folder: string }): Promise<number> {
  const window = await openStagedWindow({ suite: SUITE, settings: {}, staged: [{ id: EXTENSION_ID, version, folder }, baseline] });
  try {
    if (await activeAfterStartup(window.server, EXTENSION_ID)) throw new Error(`${folder} is active before the bench activates it`);
    const timing = await window.server.probe.activateTimed(EXTENSION_ID);
    if (timing.wasActive || !timing.isActive)
      throw new Error(`${folder}: activation not timed from inactive to active (${JSON.stringify(timing)})`);
    return timing.ms;
  } finally {
    await window.close();
  }
}

// ---------------------------------------------------------------------------------------------

export async function run(): Promise<BenchResult[]> {
  const root: TempRoot = await tempRoot('ultraplan-bench-extension-');
  const results: BenchResult[] = [];
  try {
    // Bundles: both builds of the same sources, by esbuild.mjs itself.
    const [devDist, prodDist, beforeDist] = await Promise.all([
      buildBundles(path.join(root.dir, 'build-dev'), { production: false }),
      buildBundles(path.join(root.dir, 'build-production'), { production: true }),
      BEFORE ? buildBundles(path.join(root.dir, 'build-before'), { production: true, repo: BEFORE }) : undefined,
    ]);
    const dev = bundleSizes(devDist);
    const prod = bundleSizes(prodDist);
    if (beforeDist) {
      const before = bundleSizes(beforeDist);
      for (const [name, size] of Object.entries(before)) {
        results.push(
          result(`before: dist/${name} production`, 'KB', 'lower', [size.bytes / 1024], { note: `${BEFORE} (esbuild.mjs --production)` }),
        );
      }
      const ours = prod['extension first load'];
      if (before['extension first load'] && ours) {
        results.push(
          result('extension first load production, after', 'KB', 'lower', [ours.bytes / 1024], {
            baseline: 'before: dist/extension first load production',
            note: 'what loads the first time the extension is used',
          }),
        );
      }
    }
    for (const [name, prodSize] of Object.entries(prod)) {
      const devSize = dev[name];
      if (!devSize) continue;
      const devRaw = `dist/${name} dev build (baseline)`;
      const devGzip = `dist/${name} dev build gzip (baseline)`;
      results.push(
        result(devRaw, 'KB', 'lower', [devSize.bytes / 1024], {
          note: 'node esbuild.mjs (npm run build): not minified, sourcemap in a separate .map',
        }),
      );
      results.push(
        result(`dist/${name} production`, 'KB', 'lower', [prodSize.bytes / 1024], {
          baseline: devRaw,
          note: 'node esbuild.mjs --production: minified, no sourcemap',
        }),
      );
      results.push(result(devGzip, 'KB', 'lower', [devSize.gzipBytes / 1024]));
      results.push(result(`dist/${name} production gzip`, 'KB', 'lower', [prodSize.gzipBytes / 1024], { baseline: devGzip }));
    }

    const manifest = readManifest();
    const activationEvents = manifest.activationEvents ?? [];
    const startupEvents = activationEvents.filter((e) => e === '*' || e === 'onStartupFinished');
    const baselineFolder = await stageBaselineExtension(path.join(root.dir, 'empty-extension'));
    const baseline = { id: BASELINE_EXTENSION_ID, version: '0.0.1', folder: baselineFolder };

    // Startup: the manifest as it is, no Ultraplan command run.
    const asShipped = await stageExtension(path.join(root.dir, 'extension-as-shipped'), { dist: prodDist });
    const startupWindow = await openStagedWindow({
      suite: SUITE,
      settings: {},
      staged: [{ id: EXTENSION_ID, version: manifest.version, folder: asShipped }, baseline],
    });
    let activeAtStartup: boolean;
    let startupEvent: string | undefined;
    try {
      activeAtStartup = await activeAfterStartup(startupWindow.server, EXTENSION_ID);
      startupEvent = loggedActivationEvent(startupWindow.server, EXTENSION_ID);
    } finally {
      await startupWindow.close();
    }
    console.log(
      `  startup: activationEvents ${JSON.stringify(activationEvents)} (+ one onCommand per contributed command); ` +
        `${activeAtStartup ? `ACTIVE (the extension host logged activationEvent '${startupEvent ?? '?'}')` : 'not active'} ${STARTUP_SETTLE_MS / 1000} s after startup finished with no Ultraplan command run`,
    );

    // Activation can only be timed from not yet active: the timed windows drop startup events.
    const timed = await stageExtension(path.join(root.dir, 'extension-timed'), { dist: prodDist, dropActivationEvents: startupEvents });
    const beforeTimed =
      BEFORE && beforeDist
        ? await stageExtension(path.join(root.dir, 'extension-before'), {
            dist: beforeDist,
            dropActivationEvents: startupEvents,
            repo: BEFORE,
          })
        : undefined;
    const beforeMs: number[] = [];
    const ours: number[] = [];
    const empty: number[] = [];
    const paint: PaintSample[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      const marker = `Plan ${w} ends here.`;
      const plan = `${generatePlan(PLAN_LINES - 1, w)}\n${marker}`;
      const scenarioFile = path.join(root.dir, `scenario-${w}.json`);
      await fs.promises.writeFile(scenarioFile, JSON.stringify(scenarioWithPlan(plan)));
      const sessions = await startServer({ scenario: scenarioFile, keepAliveMs: 2000 });
      const window = await openStagedWindow({
        suite: SUITE,
        settings: { 'ultraplan.backend': 'server', 'ultraplan.server.url': sessions.url },
        staged: [{ id: EXTENSION_ID, version: manifest.version, folder: timed }, baseline],
      });
      try {
        const probe = window.server.probe;
        if (await activeAfterStartup(window.server, EXTENSION_ID))
          throw new Error(`${EXTENSION_ID} is active before the bench activates it`);
        if ((await probe.extension(BASELINE_EXTENSION_ID)).isActive)
          throw new Error('the empty extension is active before the bench activates it');
        const order = w % 2 === 0 ? [EXTENSION_ID, BASELINE_EXTENSION_ID] : [BASELINE_EXTENSION_ID, EXTENSION_ID];
        for (const id of order) {
          const timing = await probe.activateTimed(id);
          if (timing.wasActive || !timing.isActive)
            throw new Error(`${id}: activation not timed from inactive to active (${JSON.stringify(timing)})`);
          (id === EXTENSION_ID ? ours : empty).push(timing.ms);
        }
        paint.push(await planArrivalToPaint(window, sessions, marker));
      } finally {
        await window.close();
        await sessions.stop();
      }
      if (BEFORE && beforeTimed) beforeMs.push(await timeActivation(beforeTimed, readManifest(BEFORE).version, baseline));
      const p = paint.at(-1);
      console.log(
        `  window ${w + 1}/${WINDOWS}: activation ${ours.at(-1)?.toFixed(1)} ms (empty ${empty.at(-1)?.toFixed(1)} ms${BEFORE ? `; before ${beforeMs.at(-1)?.toFixed(1)} ms` : ''}); ` +
          `plan arrives -> host plan_ready ${p?.hostMs.toFixed(0)} ms -> message in the panel ${p?.receivedMs.toFixed(0)} ms (handled in ${p?.handleMs.toFixed(0)} ms) -> DOM ${p?.domMs.toFixed(0)} ms -> painted ${p?.ms.toFixed(0)} ms`,
      );
    }

    const emptyName = 'activation: empty extension (baseline)';
    results.push(result(emptyName, 'ms', 'lower', empty, { note: "activate() { } in the same windows: the extension host's own cost" }));
    results.push(
      result('activation: ultraplan.ultraplan', 'ms', 'lower', ours, {
        baseline: emptyName,
        note: `await extension.activate() from inactive, production build, one fresh window each; not active at startup without ${startupEvents.length ? `${startupEvents.join(', ')} (dropped from the timed copy's manifest; the manifest as is: ${activeAtStartup ? 'active' : 'not active'} after startup)` : `a command (checked: ${activeAtStartup ? 'active' : 'not active'} after startup)`}`,
      }),
    );
    if (BEFORE) {
      results.push(
        result('activation: ultraplan.ultraplan, before', 'ms', 'lower', beforeMs, {
          baseline: emptyName,
          note: `${BEFORE}'s production build, in a fresh window after each of ours`,
        }),
      );
    }
    const worstError = Math.max(...paint.map((p) => p.errorMs));
    const stages: Array<[string, (p: PaintSample) => number, string]> = [
      [
        `${PLAN_LINES}-line plan arrives -> extension host logs plan_ready`,
        (p) => p.hostMs,
        "server event stream -> the extension's poller and scanner; from its log line's millisecond stamp",
      ],
      [
        `${PLAN_LINES}-line plan arrives -> its message reaches the panel`,
        (p) => p.receivedMs,
        "the panel's own performance mark on receiving the message that showed the plan: delivery through the workbench",
      ],
      [
        `${PLAN_LINES}-line plan: the panel handles that message`,
        (p) => p.handleMs,
        'validation, markdown-it, DOMPurify, line index, the rest of the view (between its marks)',
      ],
      [
        `${PLAN_LINES}-line plan arrives -> DOM holds its last line`,
        (p) => p.domMs,
        'server event stream -> extension host (poller, scanner, panel state) -> webview message -> render',
      ],
    ];
    for (const [name, pick, note] of stages) results.push(result(name, 'ms', 'lower', paint.map(pick), { note }));
    const plainName = `${PLAN_LINES}-line plan as plain text in the same panel frame -> painted (baseline)`;
    results.push(
      result(
        plainName,
        'ms',
        'lower',
        paint.map((p) => p.plainMs),
        { note: 'pre.textContent = the plan, then the next frame: the least a panel could do, without delivery' },
      ),
    );
    results.push(
      result(
        `${PLAN_LINES}-line plan arrives -> painted in the review panel`,
        'ms',
        'lower',
        paint.map((p) => p.ms),
        {
          baseline: plainName,
          note: `ExitPlanMode event in the server's stream -> next frame painted; clock error <= ${worstError.toFixed(1)} ms; ${paint[0]?.blocks ?? 0} commentable blocks; bare-Chromium render alone: bench/panel.bench.ts`,
        },
      ),
    );
  } finally {
    await root.remove();
  }
  return results;
}
