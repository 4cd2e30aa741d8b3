// A backend whose decisions are not what they are elsewhere says so in the decision bar, in real
// Chromium under the panel's CSP: Jules has no reject (the feedback goes as a message), takes no
// edited plan and cannot be taken home, so Edit and Teleport are off with the reason, and Reject
// stays with what it does. Another session's panel shows the usual bar again. Needs a build.
import * as assert from 'node:assert/strict';
import { backendOf } from '../../src/core/backendKinds';
import { panelState, revision, type PanelPage, usePanelBrowser } from './panelPage';

const PLAN = '# Add a dark mode toggle\n\n1. Add a `theme` field\n';

describe('review panel webview: what a backend cannot do (Chromium)', function () {
  this.timeout(60_000);
  const panels = usePanelBrowser();
  let panel: PanelPage | undefined;

  it('Jules: Reject says it is a message, Edit and Teleport are off with the reason; the usual bar elsewhere', async () => {
    const limits = backendOf('jules').limits!;
    panel = await panels.open();
    const { page } = panel;
    const label = page.locator('label[for="feedback"]');
    const button = (id: string) => page.locator(`button[data-action="${id}"]`);
    await panel.postState(panelState([revision(1, PLAN)], { backendLabel: 'Jules', backendLimits: { ...limits } }));
    assert.equal(await label.textContent(), `Feedback for the agent (${limits.reject})`);
    assert.equal(await button('reject').isEnabled(), true);
    assert.equal(await button('reject').getAttribute('title'), limits.reject);
    for (const [id, text] of [
      ['edit', limits.approveEdited],
      ['teleport', limits.teleport],
    ] as const) {
      assert.equal(await button(id).isEnabled(), false, id);
      assert.equal(await button(id).getAttribute('title'), text);
    }
    assert.equal(await button('approve').isEnabled(), true);
    await panel.screenshot('backend-limits-jules');

    await panel.postState(panelState([revision(1, PLAN)]));
    assert.equal(await label.textContent(), 'Feedback for the agent (sent with Reject)');
    for (const id of ['reject', 'edit', 'teleport']) {
      assert.equal(await button(id).isEnabled(), true, id);
      assert.equal(await button(id).getAttribute('title'), null, id);
    }
  });
});
