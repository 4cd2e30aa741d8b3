// The conformance checklist: the work verified against the approved plan, beside what the agent
// itself reported. Each step with its verdict (done, done differently, missing, not verified), the
// evidence (each file opens its diff), who verified it, and Continue on a missing step (the same
// session is asked to carry it out); then the changes no step asked for and the reviewers that
// failed. A failed verification shows its reason and no verdicts. Rebuilt only when what it shows
// changed.
import { evidencePlace, type VerifiedOutOfPlan } from '../../core/execution/panelVerification';
import type { Evidence } from '../../core/execution/verification';
import { REPORTED_LABELS, VERDICT_LABELS, type ConformanceRow, type VerificationModel, type VerificationView } from '../verificationModel';
import { button, el } from './dom';
import type { PanelActions } from './panelActions';

export class VerificationPart {
  readonly element = el('section', { className: 'verification', attrs: { 'aria-label': 'Verification against the approved plan' } });
  readonly #summary = el('p', { className: 'verification-summary', attrs: { role: 'status' } });
  readonly verify = button('Verify against plan', 'checklist', 'secondary verify-button');
  readonly #body = el('div', { className: 'verification-body' });
  readonly #actions: PanelActions;
  readonly #verification: VerificationModel;
  #signature = '';

  constructor(actions: PanelActions, verification: VerificationModel) {
    this.#actions = actions;
    this.#verification = verification;
    const head = el('div', { className: 'verification-head' });
    head.append(el('h2', { text: 'Verified against the plan' }), this.verify);
    this.element.append(head, this.#summary, this.#body);
    this.element.hidden = true;
    this.verify.addEventListener('click', () => {
      const state = this.#actions.model.state;
      if (state) this.#actions.send({ type: 'verify', sessionKey: state.sessionKey });
    });
  }

  render(): void {
    const { model } = this.#actions;
    const view = this.#verification.view(model.state, model.execution());
    this.element.hidden = view === undefined;
    if (!view) return;
    this.#summary.textContent = view.summary;
    this.verify.disabled = !view.canVerify;
    this.verify.lastChild!.textContent = view.last ? 'Verify again' : 'Verify against plan';
    this.element.dataset.kind = view.running ? 'running' : (view.last?.kind ?? 'none');
    const signature = JSON.stringify([view.last, view.rows.map((r) => [r.reported, r.canContinue])]);
    if (signature === this.#signature) return;
    this.#signature = signature;
    this.#body.replaceChildren(...this.#bodyOf(view));
  }

  #bodyOf(view: VerificationView): HTMLElement[] {
    const last = view.last;
    if (!last) return [];
    const parts: HTMLElement[] = [];
    if (last.kind !== 'verified') {
      parts.push(
        el('p', {
          className: 'verification-failed',
          text: last.kind === 'failed' ? `${last.headline}. No step was checked.` : 'The verification was cancelled. No step was checked.',
        }),
      );
    } else {
      const list = el('ol', { className: 'verification-steps' });
      for (const row of view.rows) list.append(this.#stepItem(row));
      parts.push(list);
      if (last.outOfPlan.length) parts.push(el('h3', { text: 'Changes no step asked for' }), this.#outOfPlan(last.outOfPlan));
    }
    if (last.failures.length) {
      const failed = el('ul', { className: 'verification-failures' });
      for (const f of last.failures) failed.append(el('li', { text: `${f.label} failed: ${f.error}` }));
      parts.push(el('h3', { text: 'Reviewers that failed' }), failed);
    }
    parts.push(el('p', { className: 'verification-scope', text: `Checked ${last.scope}, ${new Date(last.at).toLocaleString()}.` }));
    return parts;
  }

  #stepItem(row: ConformanceRow): HTMLLIElement {
    const item = el('li', { className: `verification-step verdict-${row.verdict}` });
    item.dataset.stepId = row.id;
    item.dataset.verdict = row.verdict;
    const head = el('div', { className: 'verification-step-head' });
    head.append(
      el('span', { className: 'verification-verdict', text: VERDICT_LABELS[row.verdict] }),
      el('span', { className: 'verification-title', text: row.title }),
      el('span', { className: 'verification-reported', text: `(agent: ${REPORTED_LABELS[row.reported]})` }),
    );
    item.append(head, el('p', { className: 'verification-explanation', text: row.explanation }));
    if (row.difference) item.append(el('p', { className: 'verification-difference', text: `How it differs: ${row.difference}` }));
    if (row.evidence.length) item.append(this.#evidence(row.evidence, `Evidence for ${row.title}`));
    item.append(
      el('p', {
        className: 'verification-by',
        text: row.verifiedBy.length ? `Verified by ${row.verifiedBy.join(', ')}` : 'No verifier stands behind this verdict',
      }),
    );
    if (row.canContinue) {
      const go = button('Continue', 'debug-continue', 'secondary continue-step');
      go.title = `Ask the same session to carry out step ${row.id}`;
      go.addEventListener('click', () => {
        const state = this.#actions.model.state;
        if (state) this.#actions.send({ type: 'continueStep', sessionKey: state.sessionKey, stepId: row.id });
      });
      item.append(go);
    }
    return item;
  }

  #evidence(evidence: readonly Evidence[], label: string): HTMLUListElement {
    const list = el('ul', { className: 'verification-evidence', attrs: { 'aria-label': label } });
    for (const e of evidence) {
      const open = button(evidencePlace(e), 'diff', 'link-button');
      open.dataset.path = e.file;
      open.addEventListener('click', () => {
        const state = this.#actions.model.state;
        if (state) this.#actions.send({ type: 'openFileDiff', sessionKey: state.sessionKey, path: e.file });
      });
      const li = el('li');
      li.append(open);
      list.append(li);
    }
    return list;
  }

  #outOfPlan(changes: readonly VerifiedOutOfPlan[]): HTMLUListElement {
    const list = el('ul', { className: 'verification-out-of-plan' });
    for (const c of changes) {
      const li = el('li');
      li.dataset.status = c.status;
      const who = c.status === 'confirmed' ? `confirmed by ${c.confirmedBy.join(', ')}` : 'no verifier could check it';
      li.append(
        this.#evidence([{ file: c.file, startLine: c.startLine, endLine: c.endLine }], `Change in ${c.file}`),
        el('p', { text: `${c.explanation} (${who})` }),
      );
      list.append(li);
    }
    return list;
  }
}
