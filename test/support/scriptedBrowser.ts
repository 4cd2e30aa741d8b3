// What a person's browser does on an identity provider's pages, with Node's fetch: follows
// redirects, keeps cookies (per host and port), and submits a page's forms with their hidden
// fields (the provider's CSRF token) plus what the person types. No JavaScript runs, which is
// fine: the provider's pages are plain forms.

export interface BrowserPage {
  readonly url: string;
  readonly status: number;
  readonly html: string;
}

interface ParsedForm {
  id: string | undefined;
  action: string;
  method: string;
  fields: Map<string, string>;
}

const MAX_REDIRECTS = 20;

export class ScriptedBrowser {
  private readonly cookies = new Map<string, Map<string, string>>();
  /** Every URL loaded, in order, redirects included. */
  readonly visited: string[] = [];

  /** Loads a URL and follows its redirects to the page that ends them. */
  open(url: string): Promise<BrowserPage> {
    return this.navigate(url, 'GET', undefined);
  }

  /**
   * Submits a form of the page: the first one whose id is `formId` (or the only one), with its
   * own fields and `typed` over them.
   */
  submit(from: BrowserPage, formId: string | undefined, typed: Record<string, string> = {}): Promise<BrowserPage> {
    const forms = parseForms(from.html);
    const form = formId === undefined ? (forms.length === 1 ? forms[0] : undefined) : forms.find((f) => f.id === formId);
    if (!form) throw new Error(`no form ${formId ?? '(the only one)'} on ${from.url}: ${forms.map((f) => f.id ?? '?').join(', ')}`);
    const fields = new URLSearchParams([...new Map([...form.fields, ...Object.entries(typed)])]);
    const action = new URL(form.action || from.url, from.url).href;
    if (form.method === 'get') {
      const target = new URL(action);
      target.search = fields.toString();
      return this.open(target.href);
    }
    return this.navigate(action, 'POST', fields.toString());
  }

  private async navigate(start: string, method: string, body: string | undefined): Promise<BrowserPage> {
    let url = start;
    let currentMethod = method;
    let currentBody = body;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      this.visited.push(url);
      const headers: Record<string, string> = { accept: 'text/html' };
      const cookie = this.cookieHeader(url);
      if (cookie) headers.cookie = cookie;
      if (currentBody !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const response = await fetch(url, {
        method: currentMethod,
        headers,
        body: currentBody,
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      });
      this.storeCookies(url, response.headers.getSetCookie());
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.arrayBuffer();
        url = new URL(location, url).href;
        // 307/308 repeat the method; the others become a GET, as browsers do.
        if (response.status !== 307 && response.status !== 308) {
          currentMethod = 'GET';
          currentBody = undefined;
        }
        continue;
      }
      return { url, status: response.status, html: await response.text() };
    }
    throw new Error(`more than ${MAX_REDIRECTS} redirects from ${start}`);
  }

  private cookieHeader(url: string): string {
    const jar = this.cookies.get(new URL(url).host);
    return jar ? [...jar].map(([name, value]) => `${name}=${value}`).join('; ') : '';
  }

  private storeCookies(url: string, setCookies: string[]): void {
    const host = new URL(url).host;
    const jar = this.cookies.get(host) ?? new Map<string, string>();
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now());
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    this.cookies.set(host, jar);
  }
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, 'i').exec(tag);
  return match ? decodeEntities(match[2] ?? match[3] ?? '') : undefined;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function parseForms(html: string): ParsedForm[] {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].map(([, attrs = '', inner = '']) => {
    const fields = new Map<string, string>();
    for (const [input] of inner.matchAll(/<input\b[^>]*>/gi)) {
      const name = attribute(input, 'name');
      if (name !== undefined) fields.set(name, attribute(input, 'value') ?? '');
    }
    return {
      id: attribute(` ${attrs}`, 'id'),
      action: attribute(` ${attrs}`, 'action') ?? '',
      method: (attribute(` ${attrs}`, 'method') ?? 'get').toLowerCase(),
      fields,
    };
  });
}
