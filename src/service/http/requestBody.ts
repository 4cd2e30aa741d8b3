// Reading what a client sends: a JSON body, bounded in size and in nesting before it is parsed,
// and the error an HTTP answer we decided on travels as.
import type * as http from 'node:http';
import { errorMessage } from '../../core/errors';

/** How much of an oversized body is read and dropped so the client gets its 413. */
const MAX_DRAIN_BYTES = 16 * 1024 * 1024;
/** Nesting a request body may have. Our bodies nest a handful of levels; thousands only crash. */
export const MAX_JSON_DEPTH = 100;

/** An HTTP answer we decided on (as opposed to a bug). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** A machine-readable why, sent as `error.reason` (the client words a refusal by it). */
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** Reads a JSON body of at most `maxBodyBytes`. `optional`: an empty body reads as {}. */
export async function readJsonBody(req: http.IncomingMessage, maxBodyBytes: number, optional = false): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBodyBytes + MAX_DRAIN_BYTES) throw tooLarge(maxBodyBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = Number.isFinite(declared) && declared > maxBodyBytes;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) tooBig = true;
    // An oversized body is read and dropped (up to a bound) before answering 413: a client
    // still sending when the connection closes sees a broken pipe instead of the answer.
    if (tooBig) {
      if (size > maxBodyBytes + MAX_DRAIN_BYTES) break;
      continue;
    }
    chunks.push(chunk as Buffer);
  }
  if (tooBig) throw tooLarge(maxBodyBytes);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') {
    if (optional) return {};
    throw new HttpError(400, 'the request body is empty; expected JSON');
  }
  // Checked on the text, before parsing: everything that walks a parsed value (schemas,
  // JSON.stringify) recurses, and a deep enough value overflows the stack.
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) {
    throw new HttpError(400, `the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new HttpError(400, `the request body is not valid JSON: ${errorMessage(err)}`);
  }
}

/** Whether JSON text opens more than `max` arrays or objects inside one another. */
export function jsonNestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

function tooLarge(max: number): HttpError {
  return new HttpError(413, `the request body exceeds ${max} bytes`);
}
