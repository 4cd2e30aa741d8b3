// The host's message with a session's verification against its approved plan
// (panelVerification.ts), and the parse of every message the panel's page takes: the shared ones
// of panelMessages.ts and this one. Apart from panelMessages.ts so that the extension's first load,
// which only sends it, does not carry its schema.
import * as z from 'zod';
import { PANEL_LIMITS, parseHostToWebviewMessage, type HostToWebviewMessage, type ParseResult } from '../panelMessages';
import { SessionVerificationSchema } from './panelVerification';

export const VerificationMessageSchema = z.strictObject({
  type: z.literal('verification'),
  sessionKey: z.string().min(1).max(PANEL_LIMITS.idChars),
  verification: SessionVerificationSchema,
});
export type VerificationMessage = z.infer<typeof VerificationMessageSchema>;

export type HostToPanelMessage = HostToWebviewMessage | VerificationMessage;

/** A message from the extension, checked with its own schema (the `type` picks which). */
export function parseHostToPanelMessage(data: unknown): ParseResult<HostToPanelMessage> {
  if (typeof data !== 'object' || data === null || (data as { type?: unknown }).type !== 'verification')
    return parseHostToWebviewMessage(data);
  const result = VerificationMessageSchema.safeParse(data);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: `invalid verification from the extension: ${z.prettifyError(result.error).slice(0, 600)}` };
}
