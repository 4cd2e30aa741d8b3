// The review panel's browser entry (bundled to dist/webview.js as an IIFE, loaded by nonce under the
// CSP of src/extension/review/reviewPanelHtml.ts). Wires the host channel to the view; everything the host
// sends is validated by ReviewView.receive before it is used.
// First: must run before any module that builds zod schemas.
import './zodJitless';
import '../../media/panel.css';
import { connectToHost } from './hostChannel';
import { scheduleWarmUp } from './renderWarmUp';
import { ReviewView } from './reviewView';

function start(): void {
  // For bench/sessionService.bench.ts: when the panel's page was there and its script began.
  performance.mark('ultraplan:started');
  const root = document.getElementById('app');
  if (!root) throw new Error('Ultraplan review: the page has no #app element');
  const host = connectToHost();
  const view = new ReviewView(host, root);
  window.addEventListener('message', (event: MessageEvent<unknown>) => view.receive(event.data));
  // A hidden or reloading panel must not lose what was typed in the last few hundred milliseconds.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') view.flush();
  });
  window.addEventListener('pagehide', () => view.flush());
  host.send({ type: 'ready' });
  scheduleWarmUp(() => view.renderedMarkdownPlan);
}

start();
