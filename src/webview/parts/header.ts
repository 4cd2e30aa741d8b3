// The panel's header (title, revision, backend and agent, phase, session link, who approved the
// shown revision under a quorum, the demo label), the host's notice, the panel's own notice and
// the session's outcome.
import { PHASE_LABELS } from '../../core/phase';
import type { PanelModel } from '../panelModel';
import { renderTextMarkdown } from '../planMarkdown';
import { el } from './dom';

export class HeaderPart {
  readonly title = el('h1', { className: 'title' });
  readonly #demoBadge = el('span', {
    className: 'badge demo-badge',
    text: 'Demo',
    // Hidden until a state says the session is the demo: a real agent's panel never shows it.
    attrs: { title: 'A scripted demo scenario, not a real agent', hidden: '' },
  });
  readonly #revisionLabel = el('span', { className: 'revision-label' });
  readonly #backendLabel = el('span', { className: 'backend-label' });
  readonly #phaseBadge = el('span', { className: 'badge phase-badge' });
  readonly #sessionLink = el('a', { className: 'session-link', text: 'Open session' });
  readonly #demoNote = el('p', {
    className: 'demo-note',
    text: 'This is the scripted demo: no real agent is planning, and nothing it approves runs anywhere.',
    attrs: { hidden: '' },
  });
  /** Who a quorum's approval of the shown revision let through ("Approved by 2 of 2: alice, bob"). */
  readonly #approvedBy = el('p', { className: 'approved-by', attrs: { hidden: '' } });
  readonly element = el('header', { className: 'panel-header' });

  constructor() {
    const titleRow = el('div', { className: 'title-row' });
    titleRow.append(this.title, this.#demoBadge);
    const meta = el('div', { className: 'meta' });
    meta.append(this.#revisionLabel, this.#backendLabel, this.#phaseBadge, this.#sessionLink);
    this.element.append(titleRow, meta, this.#approvedBy, this.#demoNote);
  }

  /** `phase`: the words for the phase when a verification has more to say than its label ("Completed, verified: 6 of 7 steps"). */
  render(model: PanelModel, phase?: string): void {
    const state = model.state;
    if (!state) {
      this.title.textContent = 'Ultraplan Review';
      return;
    }
    const shown = model.shown();
    this.title.textContent = state.title || 'Untitled plan';
    this.#demoBadge.hidden = !state.demo;
    this.#demoNote.hidden = !state.demo;
    this.#revisionLabel.textContent = shown ? `Revision ${shown.revision} of ${state.revisions.length}` : 'No plan yet';
    this.#backendLabel.textContent = [state.backendLabel, state.agentLabel, state.agentMode && `mode: ${state.agentMode}`]
      .filter(Boolean)
      .join(' · ');
    this.#phaseBadge.textContent = phase ?? PHASE_LABELS.panel[state.phase];
    this.#phaseBadge.dataset.phase = state.phase;
    this.#approvedBy.hidden = shown?.approvedBy === undefined;
    this.#approvedBy.textContent = shown?.approvedBy ?? '';
    if (state.sessionLink) {
      this.#sessionLink.href = state.sessionLink;
      this.#sessionLink.hidden = false;
    } else {
      this.#sessionLink.removeAttribute('href');
      this.#sessionLink.hidden = true;
    }
  }
}

/** The host's notice (from the state) and the panel's own (a refusal, a missing text). */
export class NoticesPart {
  readonly host = el('div', { className: 'notice', attrs: { 'aria-live': 'polite' } });
  readonly local = el('div', { className: 'notice notice-local', attrs: { role: 'alert' } });

  constructor() {
    this.host.hidden = true;
    this.local.hidden = true;
  }

  render(model: PanelModel): void {
    // Why the agent stopped, and what can still be done, unless the host has something newer to say.
    const stopped = model.state?.agentStopped;
    const notice = model.state?.notice ?? (stopped ? { level: 'warning' as const, text: stopped.text } : undefined);
    this.host.hidden = !notice;
    this.host.textContent = notice?.text ?? '';
    this.host.dataset.level = notice?.level ?? '';
    this.host.setAttribute('aria-live', notice?.level === 'info' ? 'polite' : 'assertive');
    const local = model.notice;
    this.local.hidden = local === undefined;
    this.local.textContent = local ?? '';
  }
}

export class OutcomePart {
  readonly element = el('section', { className: 'outcome', attrs: { 'aria-label': 'Outcome' } });
  #shown: string | undefined;

  constructor() {
    this.element.hidden = true;
  }

  render(model: PanelModel): void {
    const outcome = model.state?.outcome;
    this.element.hidden = !outcome;
    const key = outcome ? `${outcome.text}\u0000${outcome.link ?? ''}` : undefined;
    if (!outcome || key === this.#shown) return;
    this.#shown = key;
    const body = el('div', { className: 'markdown' });
    body.append(renderTextMarkdown(outcome.text));
    const children: Node[] = [el('h2', { text: 'Outcome' }), body];
    if (outcome.link) {
      const link = el('a', { text: 'Open the session' });
      link.href = outcome.link;
      const p = el('p');
      p.append(link);
      children.push(p);
    }
    this.element.replaceChildren(...children);
  }
}
