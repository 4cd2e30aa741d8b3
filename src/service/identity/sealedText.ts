// Text sealed with AES-256-GCM under a key only the browser's secret gives (its sign-in state, its
// session cookie): what the review page's state keeps of a pending sign-in or of a refresh token,
// so a dump of that state (a PostgreSQL table every replica reads) gives neither.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** A 256-bit key for `purpose`, derived from a secret the browser holds. */
export function sealingKey(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`ultraplan seal\0${purpose}`, 'utf8').digest();
}

/** iv, tag, ciphertext, base64url. */
export function sealText(key: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The text `sealText` sealed under `key`; throws when the key is another or the text was altered. */
export function unsealText(key: Buffer, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
