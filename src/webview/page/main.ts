// The review page's browser entry (bundled to dist/review-page.js, served by ultraplan-server at
// /review/<id> under the CSP of src/service/http/reviewPage/reviewPageHtml.ts). The panel's own
// view (ReviewView) with a host in the page: PageSession follows the session through the server's
// session routes and answers the panel's messages as ReviewPanel does in VS Code.
// First: must run before any module that builds zod schemas.
import '../zodJitless';
import '../../../media/panel.css';
import '../../../media/reviewPage.css';
import { startChecklist } from '../../core/execution/startChecklist';
import { errorMessage } from '../../core/errors';
import { splitPlanTexts, type HostToWebviewMessage, type WebviewSavedState, type WebviewToHostMessage } from '../../core/panelMessages';
import type { HostChannel } from '../hostChannel';
import { scheduleWarmUp } from '../renderWarmUp';
import { ReviewView } from '../reviewView';
import { PageApi } from './pageApi';
import { PermissionsPart, PlanEditorPart } from './pageParts';
import { PageSession } from './pageSession';
import { SignOutPart, type PageSignIn } from './signOutPart';

const SAVED_KEY = 'ultraplan-review-drafts';

function meta(name: string): string {
  const value = document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content;
  if (!value) throw new Error(`Ultraplan review: the page has no ${name}`);
  return value;
}

/** The page's host side: what the panel's messages do here, and what the panel is sent. */
class ReviewPage implements HostChannel {
  readonly session: PageSession;
  readonly view: ReviewView;
  readonly #editor: PlanEditorPart;
  readonly #permissions: PermissionsPart;
  /** Plan texts the view holds (splitPlanTexts/joinPlanTexts keep both sides in step). */
  #sent = new Set<string>();
  /** Signed out: nothing more is read, sent or kept in this tab. */
  #left = false;

  constructor(
    readonly api: PageApi,
    root: HTMLElement,
    title: string,
  ) {
    this.#editor = new PlanEditorPart({ save: (text) => this.#approveEdited(text), cancel: () => this.session.setEditing(undefined) });
    this.#permissions = new PermissionsPart({
      answer: (request, answer) => this.session.answerPermission(this.session.permissionBinding(request), request.requestId, answer),
    });
    this.session = new PageSession({
      api,
      title,
      serverLabel: `Server ${location.host}`,
      planSteps: () => startChecklist,
      onSnapshot: () => this.#postState(),
      onPermissions: (open) => this.#permissions.render(open, 'The agent'),
    });
    this.view = new ReviewView(this, root);
    root.after(this.#permissions.element, this.#editor.element);
  }

  send(message: WebviewToHostMessage): void {
    if (!this.#left) void this.#onMessage(message);
  }

  // Drafts live in this tab (sessionStorage): typed text survives a reload, and stays in this browser.
  loadSaved(): unknown {
    try {
      return JSON.parse(sessionStorage.getItem(SAVED_KEY) ?? 'null') as unknown;
    } catch {
      return null;
    }
  }

  save(state: WebviewSavedState): void {
    if (!this.#left) sessionStorage.setItem(SAVED_KEY, JSON.stringify(state));
  }

  /** After a sign-out: stop following the session, and keep none of its drafts in this browser. */
  leave(): void {
    this.#left = true;
    this.session.stop();
  }

  #post(message: HostToWebviewMessage): void {
    // The view is made after the session: the model's first snapshot comes before there is one.
    if (this.view as ReviewView | undefined) this.view.receive(message);
  }

  #postState(): void {
    if (!(this.view as ReviewView | undefined)) return;
    const { message, has } = splitPlanTexts(this.session.model.snapshot.panel, this.#sent);
    this.#sent = has;
    this.#post(message);
  }

  async #onMessage(message: WebviewToHostMessage): Promise<void> {
    if (message.type === 'ready') {
      this.#sent = new Set();
      return this.#postState();
    }
    if (message.type === 'openLink') {
      window.open(message.href, '_blank', 'noopener,noreferrer');
      return;
    }
    if (message.type === 'edit') {
      const refused = this.session.refusal(message.binding);
      const plan = this.session.model.state.pendingPlan?.plan;
      if (refused !== undefined || plan == null) {
        return this.#post({
          type: 'answer',
          requestId: message.requestId,
          result: 'refused',
          reason: refused ?? 'No plan waits for a decision.',
        });
      }
      this.session.setEditing(message.binding.toolUseId);
      this.#editor.open(plan);
      return this.#post({ type: 'answer', requestId: message.requestId, result: 'sent' });
    }
    const result = await this.session.handle(message);
    if (result && 'requestId' in message) this.#post({ type: 'answer', requestId: message.requestId, ...result });
  }

  async #approveEdited(text: string): Promise<string | undefined> {
    const pending = this.session.model.snapshot.panel.revisions.at(-1);
    if (!pending) return 'No plan waits for a decision.';
    const binding = { sessionId: this.api.sessionId, toolUseId: pending.toolUseId, planHash: pending.planHash };
    const result = await this.session.approveEdited(binding, text);
    if (result.result === 'sent') this.session.setEditing(undefined);
    return result.result === 'refused' ? result.reason : undefined;
  }
}

async function start(): Promise<void> {
  const root = document.getElementById('app');
  if (!root) throw new Error('Ultraplan review: the page has no #app element');
  const api = new PageApi(meta('ultraplan-session'), meta('ultraplan-csrf'));
  const signIn: PageSignIn = meta('ultraplan-sign-in') === 'link' ? 'link' : 'issuer';
  // The review is made once the session is read; a sign-out may come before (a refused read).
  const shown: { page?: ReviewPage } = {};
  const account = new SignOutPart(
    {
      signOut: () => api.signOut(),
      leave: () => {
        shown.page?.leave();
        sessionStorage.removeItem(SAVED_KEY);
      },
    },
    signIn,
    `/review/${encodeURIComponent(api.sessionId)}`,
  );
  root.before(account.element);
  let title = 'Plan review';
  try {
    title = (await api.getSession()).title || title;
  } catch (err) {
    const error = document.createElement('p');
    error.className = 'notice page-error';
    error.dataset.level = 'error';
    error.textContent = `The session could not be read: ${errorMessage(err)}`;
    root.replaceChildren(error);
    return;
  }
  document.title = `${title} · Ultraplan Review`;
  const page = new ReviewPage(api, root, title);
  shown.page = page;
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') page.view.flush();
  });
  window.addEventListener('pagehide', () => page.view.flush());
  page.send({ type: 'ready' });
  scheduleWarmUp(() => page.view.renderedMarkdownPlan);
  await page.session.follow();
}

void start();
