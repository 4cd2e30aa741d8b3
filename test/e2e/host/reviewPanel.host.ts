// In-host: the review panel's host side with a real webview panel: one panel at a time, a state
// that fails the shared schema is refused (and said so) rather than posted, and closing it lets go
// of everything it owned, once.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import { PANEL_LIMITS, type PanelState } from '../../../src/core/panelMessages';
import { ReviewPanel } from '../../../src/extension/review/reviewPanel';

const EXTENSION_ID = 'ultraplan.ultraplan';

function state(plan: string): PanelState {
  return {
    sessionKey: 'server:s_panel_host',
    sessionId: 's_panel_host',
    title: 'panel host test',
    backendLabel: 'Memory',
    phase: 'plan_ready',
    revisions: [
      {
        revision: 1,
        toolUseId: 'toolu_1',
        plan,
        planHash: createHash('sha256').update(plan).digest('hex'),
        status: 'pending',
        comments: [],
      },
    ],
    canDecide: true,
  };
}

describe('ReviewPanel (real webview panel)', function () {
  this.timeout(30_000);
  const warnings: string[] = [];
  let extensionUri: vscode.Uri;

  before(() => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    extensionUri = extension.extensionUri;
    ReviewPanel.current?.dispose();
  });

  it('creates one panel and reveals it again for the next state', () => {
    const options = { extensionUri, log: { info: () => undefined, warn: (m: string) => warnings.push(m) } };
    const first = ReviewPanel.createOrShow(options, state('# One'), { preserveFocus: true });
    const second = ReviewPanel.createOrShow(options, state('# Two'), { preserveFocus: true });
    assert.equal(first, second);
    assert.equal(ReviewPanel.current, first);
    assert.equal(first.sessionKey, 'server:s_panel_host');
    assert.equal(first.state?.revisions[0]?.plan, '# Two');
  });

  it('refuses a state the webview would refuse, keeping the last good one', () => {
    const panel = ReviewPanel.current!;
    const error = panel.update(state('x'.repeat(PANEL_LIMITS.planChars + 1)));
    assert.match(error ?? '', /invalid panel state/);
    assert.equal(panel.state?.revisions[0]?.plan, '# Two');
    assert.ok(warnings.some((w) => w.includes('not showing an invalid state')));
  });

  it('closing it disposes it once and forgets it', () => {
    const panel = ReviewPanel.current!;
    let closed = 0;
    panel.onDidDispose(() => closed++);
    panel.dispose();
    panel.dispose();
    assert.equal(closed, 1);
    assert.equal(ReviewPanel.current, undefined);
    assert.equal(panel.visible, false);
  });
});
