// The review panel's view: the panel model (panelModel.ts) shown by its parts (header, question,
// revision list, the approved plan's checklist, plan with its comment threads, decision bar). State comes only from the host's
// validated messages; decisions go out as typed messages carrying the binding of the plan shown,
// each with a request id, and the buttons stay locked until the host answers that request (`sent`
// or `refused`, see src/core/panelMessages.ts). Drafts are written from the keystroke that typed
// them, at a bounded rate (draftWrites.ts).
import {
  DRAFT_WRITE_INTERVAL_MS,
  isHttpUrl,
  parseWebviewSavedState,
  type InvokableAction,
  type WebviewToHostMessage,
} from '../core/panelMessages';
import { parseHostToPanelMessage } from '../core/execution/verificationMessage';
import { DraftWrites } from './draftWrites';
import type { HostChannel } from './hostChannel';
import { PanelModel, type DraftKey } from './panelModel';
import { DecisionBar } from './parts/decisionBar';
import { ExecutionPart } from './parts/execution';
import { HeaderPart, NoticesPart, OutcomePart } from './parts/header';
import type { PanelActions } from './parts/panelActions';
import { PlanPart, RevisionFeedbackPart } from './parts/plan';
import { QuestionPart } from './parts/question';
import { RevisionListPart } from './parts/revisionList';
import { VerificationPart } from './parts/verification';
import { VerificationModel } from './verificationModel';

/** A request id unique to this page load (an answer from before a reload cannot match a new one). */
function newRequestId(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export class ReviewView implements PanelActions {
  readonly model = new PanelModel({ newRequestId, now: () => Date.now() });
  readonly verification = new VerificationModel();
  readonly #host: HostChannel;
  readonly #root: HTMLElement;
  readonly #writes: DraftWrites<DraftKey>;
  /** A `ready` sent for missing plan texts, not yet answered by a whole state. */
  #askedForTexts = false;
  readonly #header = new HeaderPart();
  readonly #notices = new NoticesPart();
  readonly #outcome = new OutcomePart();
  readonly #question: QuestionPart;
  readonly #revisions: RevisionListPart;
  readonly #revisionFeedback = new RevisionFeedbackPart();
  readonly #plan: PlanPart;
  readonly #decision: DecisionBar;
  readonly #execution: ExecutionPart;
  readonly #verification: VerificationPart;

  constructor(host: HostChannel, root: HTMLElement) {
    this.#host = host;
    this.#root = root;
    this.#writes = new DraftWrites((key) => this.#write(key), DRAFT_WRITE_INTERVAL_MS, {
      now: () => performance.now(),
      setTimeout: (run, ms) => setTimeout(run, ms),
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    });
    this.#question = new QuestionPart(this);
    this.#revisions = new RevisionListPart(this);
    this.#plan = new PlanPart(this);
    this.#decision = new DecisionBar(this);
    this.#execution = new ExecutionPart(this);
    this.#verification = new VerificationPart(this, this.verification);
    this.#listenForLinks();
    root.replaceChildren(
      this.#header.element,
      this.#notices.host,
      this.#notices.local,
      this.#outcome.element,
      this.#question.element,
      this.#revisions.element,
      this.#execution.element,
      this.#verification.element,
      this.#revisionFeedback.element,
      this.#plan.element,
      this.#decision.element,
    );
    this.#restoreSaved();
    this.render();
  }

  /** Whether a plan was rendered as Markdown here: the render path is warm from then on (renderWarmUp.ts). */
  get renderedMarkdownPlan(): boolean {
    return this.#plan.renderedMarkdown;
  }

  /** Handles one raw message event's data: parsed, and dropped with a visible notice if invalid. */
  receive(data: unknown): void {
    // For bench/extension.bench.ts: when each message arrived and when it was shown, so delivery
    // and rendering can be told apart in the real panel (a mark costs microseconds).
    performance.mark('ultraplan:received');
    const parsed = parseHostToPanelMessage(data);
    if (!parsed.ok) {
      console.error(`Ultraplan review: dropped ${parsed.error}`);
      this.notice(
        `Ignored a message from the extension that did not pass validation (${parsed.error.split('\n')[0] ?? ''}). Nothing was changed.`,
      );
      return;
    }
    const message = parsed.value;
    if (message.type === 'state') {
      const taken = this.model.receiveState(message);
      if (!taken.shown) {
        // A text this page never got (it was recreated, or a message was lost): ask for everything once.
        if (!this.#askedForTexts) this.#host.send({ type: 'ready' });
        this.#askedForTexts = true;
        return;
      }
      this.#askedForTexts = false;
      this.render();
      this.#markPainted();
      // Another session is saved at once: the workbench revives the panel from this saved state,
      // and a reload right after the switch would bring back the session shown before.
      if (this.model.sessionUnsaved()) this.#host.save(this.model.savedState());
    } else if (message.type === 'answer') {
      if (this.model.receiveAnswer(message)) this.render();
    } else if (message.type === 'verification') {
      this.verification.receive(message);
      this.render();
    } else {
      this.decide(message.action);
    }
    performance.mark('ultraplan:shown');
  }

  /**
   * For bench/sessionService.bench.ts: once the frame that shows this state has been painted, a
   * mark saying whether it showed a plan and whether it could be decided (how soon a reloaded
   * window shows a ready plan is read from the page itself, not by polling it from outside).
   */
  #markPainted(): void {
    const detail = { plan: this.#plan.hasBlocks, decidable: this.model.decisionOpen() };
    requestAnimationFrame(() => setTimeout(() => performance.mark('ultraplan:painted', { detail }), 0));
  }

  render(): void {
    const { model } = this;
    this.#root.classList.toggle('no-state', !model.state);
    this.#header.render(model, this.verification.headerPhase(model.state));
    this.#notices.render(model);
    this.#outcome.render(model);
    this.#question.render(this);
    this.#revisions.render();
    this.#execution.render();
    this.#verification.render();
    this.#plan.render();
    this.#revisionFeedback.render(this);
    this.#decision.render(this.#plan.hasBlocks);
  }

  draftsChanged(): void {
    for (const key of this.model.changedDrafts) this.#writes.changed(key);
  }

  decide(action: InvokableAction, notes?: string): void {
    const outcome = this.model.decide(action, notes);
    if (!outcome.ok) {
      this.notice(outcome.notice);
      if (outcome.focus === 'feedback') this.#decision.feedback.focus();
      else if (outcome.focus === 'notes') this.#decision.notes.focus();
      return;
    }
    this.#host.send(outcome.message);
    this.render();
    this.#decision.status.focus();
  }

  reply(): void {
    const outcome = this.model.reply();
    if (!outcome.ok) {
      // Not available (a question already answered, a decision in flight): nothing to say.
      if (outcome.focus !== 'reply') return;
      this.notice(outcome.notice);
      this.#question.field.focus();
      return;
    }
    this.#host.send(outcome.message);
    this.render();
    this.#host.save(this.model.savedState());
  }

  send(message: WebviewToHostMessage): void {
    this.#host.send(message);
  }

  notice(text: string): void {
    this.model.showNotice(text);
    this.#notices.render(this.model);
  }

  /** Writes every draft still waiting now (the page is hidden or going away). */
  flush(): void {
    this.#writes.flush();
    this.#host.save(this.model.savedState());
  }

  /** One draft out: setState (every draft, cheap: no plan in it) and the host's copy. */
  #write(key: DraftKey): void {
    this.#host.save(this.model.savedState());
    const message = this.model.takeChanged(key);
    if (message) this.#host.send(message);
  }

  #restoreSaved(): void {
    const raw = this.#host.loadSaved();
    if (raw === undefined || raw === null) return;
    const parsed = parseWebviewSavedState(raw);
    if (!parsed.ok) {
      console.warn(`Ultraplan review: ignored the saved panel state (${parsed.error})`);
      return;
    }
    this.model.restore(parsed.value);
  }

  /** Every link click in the page: never navigate; http(s) goes to the host, anything else is refused. */
  #listenForLinks(): void {
    document.addEventListener(
      'click',
      (event) => {
        const target = event.target;
        if (!(target instanceof Element)) return;
        const anchor = target.closest('a');
        if (!anchor) return;
        event.preventDefault();
        event.stopPropagation();
        const href = anchor.getAttribute('href') ?? '';
        if (isHttpUrl(href)) this.#host.send({ type: 'openLink', href });
        else this.notice('That link was not opened: only http and https links open from the review panel.');
      },
      true,
    );
    // Middle-click / auxclick would otherwise be handled by the webview host.
    document.addEventListener(
      'auxclick',
      (event) => {
        if (event.target instanceof Element && event.target.closest('a')) {
          event.preventDefault();
          event.stopPropagation();
        }
      },
      true,
    );
  }
}
