// What a person pastes into "Attach to Session…": a Claude Code on the web link
// (`https://claude.ai/code/session_…`), a session URL on a Sessions server
// (`http://host:8787/v1/code/sessions/cse_…`, `…/v1/sessions/session_…`, with or without a tail such as
// `/events`), a Jules link (`https://jules.google.com/session/<digits>`) or a Jules id (digits), or a
// bare id (`session_…`, `cse_…`), which names a session on the current backend.
// Pure: the text is checked and taken apart here; nothing is fetched. Anything that is not plainly one
// of these is refused with the reason, so a pasted link never points a request anywhere unexpected.
import * as z from 'zod';
import { toLinkSessionId } from './codeSessions';

/** Longer than any real link; a paste beyond it is something else. */
export const MAX_ATTACH_INPUT_CHARS = 2048;
/** Ids Claude Code accepts (`^(?:session|cse)_[A-Za-z0-9_-]+$`, read from its client), bounded. */
export const SESSION_ID_PATTERN = /^(?:session|cse)_[A-Za-z0-9_-]{1,200}$/;
/** Hosts whose links name a Claude Code on the web session. */
export const CLAUDE_WEB_LINK_HOSTS: ReadonlySet<string> = new Set(['claude.ai', 'www.claude.ai']);
/** Hosts of Claude Code on the web's API (a session URL there is a claude-web session, not a server). */
export const CLAUDE_WEB_API_HOSTS: ReadonlySet<string> = new Set(['api.anthropic.com']);

/** Hosts whose links name a Jules session (the `url` its sessions carry). */
export const JULES_LINK_HOSTS: ReadonlySet<string> = new Set(['jules.google.com']);
/** Jules session ids are decimal digits ("14550388554331055113"), bounded. */
export const JULES_SESSION_ID_PATTERN = /^\d{1,40}$/;

export const SessionIdSchema = z
  .string()
  .regex(SESSION_ID_PATTERN, 'a session id is session_… or cse_… followed by letters, digits, "_" or "-"');

export type AttachTarget =
  /** A bare id: a session on the backend chosen now. */
  | { backend: 'current'; sessionId: string }
  | { backend: 'claude-web'; sessionId: string }
  | { backend: 'jules'; sessionId: string }
  /** `serverUrl` is the server's base address (origin and any path before `/v1/`). */
  | { backend: 'server'; serverUrl: string; sessionId: string };

export type AttachTargetResult = { ok: true; target: AttachTarget } | { ok: false; error: string };

const refuse = (error: string): AttachTargetResult => ({ ok: false, error });

/**
 * Reads a pasted link or id. Session ids come back in their link form (`session_X`): `cse_X` names
 * the same session, and the clients turn it into the form their wire wants.
 */
export function parseAttachTarget(input: string): AttachTargetResult {
  if (input.length > MAX_ATTACH_INPUT_CHARS)
    return refuse(`That is ${input.length} characters long; a session link or id is at most ${MAX_ATTACH_INPUT_CHARS}.`);
  const text = input.trim();
  if (text === '') return refuse('Paste a session link (https://claude.ai/code/session_…, a server URL with a session id) or an id.');
  // Control characters, spaces, quotes, angle brackets inside: not a link a browser would take as one.
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f-\u009f"'<>`\\]/.test(text))
    return refuse('That contains spaces, quotes or control characters; paste just the link or the id.');
  if (/^(?:session|cse)_/.test(text)) return bareId(text);
  if (JULES_SESSION_ID_PATTERN.test(text)) return { ok: true, target: { backend: 'jules', sessionId: text } };
  if (!/^[a-z][a-z0-9+.-]*:/i.test(text))
    return refuse('That is neither a session id (session_…, cse_…, or a Jules id of digits) nor a link starting with https:// or http://.');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('That is not a valid link.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return refuse(`Only http:// and https:// links are taken (that one is ${url.protocol.replace(/:$/, '')}:).`);
  if (url.username !== '' || url.password !== '')
    return refuse('That link carries a user name or password; remove them (a server token belongs in "Ultraplan: Set Server Token…").');
  const segments = url.pathname.split('/').filter((s) => s !== '');
  let decoded: string[];
  try {
    decoded = segments.map((s) => decodeURIComponent(s));
  } catch {
    return refuse('That link has a malformed %-escape in its path.');
  }
  const host = url.hostname.toLowerCase();
  if (CLAUDE_WEB_LINK_HOSTS.has(host)) {
    if (url.protocol !== 'https:') return refuse('Claude Code on the web links start with https://.');
    if (decoded[0] !== 'code' || decoded[1] === undefined || decoded.length > 2)
      return refuse('A Claude Code on the web link looks like https://claude.ai/code/session_…; this one names no session.');
    return withId(decoded[1], (sessionId) => ({ backend: 'claude-web', sessionId }));
  }
  if (JULES_LINK_HOSTS.has(host)) {
    if (url.protocol !== 'https:') return refuse('Jules links start with https://.');
    const id = decoded[1];
    if (decoded[0] !== 'session' || id === undefined || decoded.length > 2 || !JULES_SESSION_ID_PATTERN.test(id))
      return refuse('A Jules link looks like https://jules.google.com/session/<digits>; this one names no session.');
    return { ok: true, target: { backend: 'jules', sessionId: id } };
  }
  const api = sessionInApiPath(decoded);
  if (!api) return refuse('No session id in that link: expected …/v1/code/sessions/<id>, …/v1/sessions/<id> or claude.ai/code/<id>.');
  if (CLAUDE_WEB_API_HOSTS.has(host)) {
    if (url.protocol !== 'https:') return refuse('Claude Code on the web links start with https://.');
    return withId(api.id, (sessionId) => ({ backend: 'claude-web', sessionId }));
  }
  // The base address keeps a path prefix (a server behind a proxy at /ultraplan/), as the client does.
  const prefix = segments.slice(0, api.at).join('/');
  const serverUrl = `${url.origin}${prefix ? `/${prefix}` : ''}`;
  return withId(api.id, (sessionId) => ({ backend: 'server', serverUrl, sessionId }));
}

function bareId(text: string): AttachTargetResult {
  return withId(text, (sessionId) => ({ backend: 'current', sessionId }));
}

function withId(raw: string, make: (sessionId: string) => AttachTarget): AttachTargetResult {
  const id = SessionIdSchema.safeParse(raw);
  if (!id.success)
    return refuse(
      `"${raw.slice(0, 60)}${raw.length > 60 ? '…' : ''}" is not a session id: ${id.error.issues[0]?.message ?? 'invalid'} (at most 200 after the prefix).`,
    );
  return { ok: true, target: make(toLinkSessionId(id.data)) };
}

/** Where `v1/code/sessions/<id>` or `v1/sessions/<id>` starts in the path, and the id. */
function sessionInApiPath(segments: readonly string[]): { at: number; id: string } | undefined {
  for (let i = 0; i < segments.length; i++) {
    if (segments[i] !== 'v1') continue;
    const code = segments[i + 1] === 'code' && segments[i + 2] === 'sessions';
    const old = segments[i + 1] === 'sessions';
    const id = code ? segments[i + 3] : old ? segments[i + 2] : undefined;
    if (id !== undefined) return { at: i, id };
  }
  return undefined;
}

/** Whether two ids name one session (`session_X` and `cse_X` do). */
export function sameSessionId(a: string, b: string): boolean {
  return toLinkSessionId(a) === toLinkSessionId(b);
}

/** Whether two server base addresses are one server (trailing slashes and the host's case aside). */
export function sameServerUrl(a: string, b: string): boolean {
  const norm = (u: string): string => {
    try {
      const url = new URL(u);
      return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    } catch {
      return u;
    }
  };
  return norm(a) === norm(b);
}
