// Small DOM builders the panel's parts share.

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string; attrs?: Record<string, string> } = {},
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.className) element.className = props.className;
  if (props.text !== undefined) element.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value);
  return element;
}

export function button(label: string, icon: string | undefined, className = ''): HTMLButtonElement {
  const b = el('button', { className, attrs: { type: 'button' } });
  if (icon) b.append(el('span', { className: `codicon codicon-${icon}`, attrs: { 'aria-hidden': 'true' } }));
  b.append(document.createTextNode(label));
  return b;
}

/** Ctrl/Cmd+Enter sends (Enter alone is a new line); Escape cancels, where the field has a cancel. */
export function sendOnCtrlEnter(field: HTMLTextAreaElement, send: () => void, cancel?: () => void): void {
  field.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      send();
    } else if (cancel && event.key === 'Escape') {
      event.preventDefault();
      cancel();
    }
  });
}

/** Sets a field's text from the model unless the person is typing in it (their text is newer). */
export function showFieldText(field: HTMLTextAreaElement, text: string): void {
  if (field.value !== text && document.activeElement !== field) field.value = text;
}
