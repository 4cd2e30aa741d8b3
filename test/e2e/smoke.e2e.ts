// Proves the harness end to end: code-server starts with the built extension, the palette runs
// an Ultraplan command, the in-host suite runs and reports, the probe answers across a reload.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  assertHostSuitePassed,
  openTestWindow,
  runCommand,
  screenshot,
  screenshotIfFailed,
  statusBarAriaLabel,
  readStatusBar,
  waitForOutputChannel,
  uriArg,
  type TestWindow,
} from './harness';

describe('smoke: code-server + Chromium + Ultraplan', function () {
  let window: TestWindow | undefined;

  before(async function () {
    window = await openTestWindow({ suite: 'smoke', hostSuite: 'smoke' });
  });
  afterEach(async function () {
    await screenshotIfFailed(this, window);
  });
  after(async function () {
    await window?.close();
  });

  it('opens the workspace in the workbench', async function () {
    const w = window!;
    await screenshot(w.page, 'workbench');
    const title = await w.page.title();
    assert.match(title, /ultraplan-ws-/, `window title "${title}" does not name the workspace folder`);
  });

  it('shows the idle status item once the window is up, before any Ultraplan command', async function () {
    const w = window!;
    const text = await readStatusBar(w.page, 'Ultraplan', { timeoutMs: 30_000 });
    assert.equal(text.trim(), 'Ultraplan');
    assert.match(await statusBarAriaLabel(w.page, 'Ultraplan'), /no planning session/);
  });

  it('runs the in-host suite: the extension is installed from its .vsix and activates', async function () {
    const results = await window!.expectHostSuitePassed();
    assert.ok(results.passed >= 3);
  });

  it('runs "Ultraplan: Show Log" from the palette and shows the Ultraplan output channel', async function () {
    const w = window!;
    await runCommand(w.page, 'Ultraplan: Show Log');
    await waitForOutputChannel(w.page, 'Ultraplan');
    await screenshot(w.page, 'show-log');
  });

  it('answers probe requests from the extension host', async function () {
    const w = window!;
    const extension = await w.probe.extension('ultraplan.ultraplan');
    assert.equal(extension.present, true);
    assert.equal(extension.isActive, true);
    assert.ok((await w.probe.commands('ultraplan.')).includes('ultraplan.showLog'));
    await w.probe.executeCommand('vscode.open', uriArg(`${w.workspace}/README.md`));
    const editors = await w.probe.editors();
    assert.ok(
      editors.some((e) => e.uri.endsWith('/README.md') && e.text.startsWith('# Sample')),
      `README.md not open: ${JSON.stringify(editors.map((e) => e.uri))}`,
    );
    await assert.rejects(w.probe.executeCommand('ultraplan.noSuchCommand'), /not found/);
  });

  it('reports in-host failures test by test, and fails the outer test on them', async function () {
    const w = window!;
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'ultraplan-host-suite-'));
    try {
      const file = path.join(dir, 'mixed.js');
      fs.writeFileSync(
        file,
        [
          "const vscode = require('vscode');",
          "describe('mixed', () => {",
          "  it('sees the vscode API', () => { if (typeof vscode.commands.executeCommand !== 'function') throw new Error('no vscode'); });",
          "  it('fails on purpose', () => { throw new Error('boom from the host'); });",
          '});',
        ].join('\n'),
      );
      const results = await w.probe.runSuite(file);
      assert.equal(results.passed, 1);
      assert.equal(results.failed, 1);
      assert.deepEqual(
        results.tests.map((t) => [t.fullTitle, t.state]),
        [
          ['mixed sees the vscode API', 'passed'],
          ['mixed fails on purpose', 'failed'],
        ],
      );
      assert.throws(() => assertHostSuitePassed(results, { print: false }), /mixed fails on purpose: boom from the host/);
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
    const missing = await w.probe.runSuite('no-such-suite');
    assert.match(missing.loadError ?? '', /bundle not found/);
    assert.throws(() => assertHostSuitePassed(missing, { print: false }), /could not run/);
  });

  it('runs the followed-sessions suite in the host: trust re-attach, panel answers, attach, sessions of other windows, Continue after a reload, setting targets', async function () {
    const results = await window!.probe.runSuite('followedSessions', { timeoutMs: 120_000 });
    assertHostSuitePassed(results);
    assert.equal(results.passed, 6);
  });

  it('runs the review panel suite in the host: one panel, invalid states refused, disposed once', async function () {
    const results = await window!.probe.runSuite('reviewPanel', { timeoutMs: 60_000 });
    assertHostSuitePassed(results);
    assert.equal(results.passed, 3);
  });

  it('runs the backends suite in the host: one backend per URL, tokens from secret storage, the demo', async function () {
    const results = await window!.probe.runSuite('backends', { timeoutMs: 120_000 });
    assertHostSuitePassed(results);
    assert.equal(results.passed, 3);
  });

  it('follows a window reload to the new extension host', async function () {
    const w = window!;
    const before = w.probe.announcement();
    const after = await w.reload();
    assert.notEqual(after.startedAt, before?.startedAt);
    const extension = await w.probe.extension('ultraplan.ultraplan', { activate: true });
    assert.equal(extension.isActive, true);
    await screenshot(w.page, 'after-reload');
  });
});
