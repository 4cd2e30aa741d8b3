// The agent's question and the reply box: Ctrl/Cmd+Enter sends, each keystroke is a draft. When
// the agent stopped and no plan waits, the same box continues planning (its text optional).
import { PANEL_LIMITS } from '../../core/panelMessages';
import { renderTextMarkdown } from '../planMarkdown';
import { button, el, sendOnCtrlEnter, showFieldText } from './dom';
import type { PanelActions } from './panelActions';
import { ACTION_LABELS } from '../panelModel';

export class QuestionPart {
  readonly element = el('section', { className: 'question', attrs: { 'aria-label': 'Question from the agent' } });
  readonly #text = el('div', { className: 'question-text markdown' });
  readonly field = el('textarea', { attrs: { id: 'reply-text', rows: '4', maxlength: String(PANEL_LIMITS.replyChars) } });
  readonly #send = button('Reply', 'reply', 'primary');
  readonly #heading = el('h2', { text: 'The agent asks' });
  readonly #label = el('label', { text: 'Your reply', attrs: { for: 'reply-text' } });

  constructor(actions: PanelActions) {
    const actionsRow = el('div', { className: 'actions' });
    actionsRow.append(this.#send);
    this.element.append(this.#heading, this.#text, this.#label, this.field, actionsRow);
    this.element.hidden = true;
    this.#send.addEventListener('click', () => actions.reply());
    // As in the comment composer: Ctrl+Enter (Cmd+Enter) sends; Enter alone is a new line.
    sendOnCtrlEnter(this.field, () => actions.reply());
    this.field.setAttribute('aria-keyshortcuts', 'Control+Enter');
    this.field.placeholder = 'Ctrl+Enter sends';
    this.field.addEventListener('input', () => {
      actions.model.typeReply(this.field.value);
      actions.draftsChanged();
    });
  }

  render(actions: PanelActions): void {
    const { model } = actions;
    const question = model.state?.question;
    const stopped = model.continues();
    this.element.hidden = !question && !stopped;
    if (!question && !stopped) return;
    this.#heading.textContent = stopped ? (question ? 'The agent stopped after saying' : 'The agent stopped') : 'The agent asks';
    this.#label.textContent = stopped
      ? 'Your message (optional): a new agent turn goes on planning with the conversation so far'
      : 'Your reply';
    const label = this.#send.lastChild;
    if (label) label.textContent = stopped ? ACTION_LABELS.continue : ACTION_LABELS.reply;
    this.element.setAttribute('aria-label', stopped ? 'The agent stopped' : 'Question from the agent');
    this.#text.hidden = !question;
    if (question && this.#text.dataset.source !== question) {
      this.#text.replaceChildren(renderTextMarkdown(question));
      this.#text.dataset.source = question;
    }
    // A sent reply leaves the field even while it has the focus.
    const text = model.replyText();
    if (text === '') this.field.value = '';
    else showFieldText(this.field, text);
    const open = model.replyEnabled();
    this.#send.disabled = !open;
    this.field.disabled = !open;
  }
}
