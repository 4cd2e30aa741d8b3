// The review page's Sign out: a real button at the top of the page that ends this browser's
// session on the server (every replica), then puts the page in a signed-out state with no session
// content left on it. Texts go in as text, never as markup.
import { errorMessage } from '../../core/errors';
import { button, el } from '../parts/dom';

/** How this browser got in: the team's issuer, or a one-time link (which cannot be opened again). */
export type PageSignIn = 'issuer' | 'link';

export interface SignOutActions {
  /** Ends the browser session on the server; throws when the server did not. */
  signOut(): Promise<void>;
  /** Stops following the session and forgets what this tab kept of it. */
  leave(): void;
}

export class SignOutPart {
  readonly element = el('nav', { className: 'page-account', attrs: { 'aria-label': 'Account' } });
  readonly button = button('Sign out', 'sign-out', 'secondary');
  readonly #status = el('p', { className: 'page-account-status', attrs: { role: 'alert' } });

  constructor(
    private readonly actions: SignOutActions,
    private readonly signIn: PageSignIn,
    private readonly pagePath: string,
  ) {
    this.button.title = signIn === 'issuer' ? 'Sign this browser out of the review server' : 'End this browser’s review session';
    this.#status.hidden = true;
    this.element.append(this.button, this.#status);
    this.button.addEventListener('click', () => void this.#signOut());
  }

  async #signOut(): Promise<void> {
    this.button.disabled = true;
    this.#status.hidden = true;
    try {
      await this.actions.signOut();
    } catch (err) {
      this.button.disabled = false;
      this.#status.hidden = false;
      this.#status.textContent = `Not signed out: ${errorMessage(err)}`;
      return;
    }
    this.actions.leave();
    showSignedOut(this.signIn, this.pagePath);
  }
}

/** The page after a sign-out: what happened and the way back, in place of everything it showed. */
export function showSignedOut(signIn: PageSignIn, pagePath: string): void {
  const heading = el('h1', { text: 'Signed out', attrs: { tabindex: '-1' } });
  const main = el('main', { className: 'signed-out', attrs: { id: 'app' } });
  main.append(heading);
  if (signIn === 'issuer') {
    main.append(el('p', { text: 'This browser is signed out of the review server.' }));
    const again = el('a', { className: 'sign-in-again', text: 'Sign in again' });
    again.href = pagePath;
    // The panel's own link handler (capturing on the document) opens links in a new tab through its
    // host, which is gone: this one navigates the page itself, so it is stopped before that handler.
    window.addEventListener(
      'click',
      (event) => {
        if (event.target instanceof Node && again.contains(event.target)) event.stopPropagation();
      },
      true,
    );
    const p = el('p');
    p.append(again);
    main.append(p);
  } else {
    main.append(el('p', { text: 'This browser’s review session has ended. To review again, open a new review link.' }));
  }
  // The page's script element stays; everything that showed the session goes.
  for (const child of [...document.body.children]) if (child.tagName !== 'SCRIPT') child.remove();
  document.body.prepend(main);
  document.title = 'Signed out · Ultraplan Review';
  heading.focus();
}
