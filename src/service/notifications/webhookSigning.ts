// The generic webhook's signature: HMAC-SHA256 with the shared secret over the timestamp, a dot
// and the exact body, sent as `X-Ultraplan-Signature: sha256=<hex>` with the timestamp in
// `X-Ultraplan-Timestamp` (Unix seconds). The timestamp is inside the MAC, so a receiver that
// refuses old timestamps cannot be fed a recorded delivery again later.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-ultraplan-signature';
export const TIMESTAMP_HEADER = 'x-ultraplan-timestamp';
/** How old a delivery a receiver accepts by default, seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function signatureOf(secret: string | Buffer, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The headers of a signed delivery. */
export function signedHeaders(secret: string | Buffer, body: string, nowMs: number = Date.now()): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: signatureOf(secret, timestamp, body) };
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** What a receiver does with a delivery: the MAC in constant time, then the timestamp's age. */
export function verifySignature(
  secret: string | Buffer,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: string,
  options: { nowMs?: number; toleranceSeconds?: number } = {},
): SignatureCheck {
  if (!headers.signature || !headers.timestamp) return { ok: false, reason: 'unsigned' };
  if (!/^\d{1,12}$/.test(headers.timestamp)) return { ok: false, reason: 'malformed timestamp' };
  const timestamp = Number(headers.timestamp);
  const expected = Buffer.from(signatureOf(secret, timestamp, body));
  const given = Buffer.from(headers.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad signature' };
  const age = Math.abs((options.nowMs ?? Date.now()) / 1000 - timestamp);
  if (age > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return { ok: false, reason: 'timestamp outside the tolerance' };
  return { ok: true };
}
