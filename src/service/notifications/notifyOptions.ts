// The notification flags of ultraplan-server: --notify-webhook URL (repeatable; `slack:URL` or a
// hooks.slack.com address for Slack's form, `generic:URL` or any other for the signed JSON),
// --notify-webhook-secret-file PATH (the HMAC key, from a file or a pipe: never an argument or a
// variable), --notify-include-plan (the plan's text is left out unless given), --notify-link-base
// URL (where people open a session: the server's public address; default its listening one).
import { toCodeSessionId } from '../../core/codeSessions';
import { WebhookNotifier } from './webhookNotifier';
import { parseWebhookTarget } from './webhookTargets';

export const NOTIFY_ARG_OPTIONS = {
  'notify-webhook': { type: 'string', multiple: true },
  'notify-webhook-secret-file': { type: 'string' },
  'notify-include-plan': { type: 'boolean', default: false },
  'notify-link-base': { type: 'string' },
} as const;

export const NOTIFY_HELP = `  --notify-webhook URL
                      post plan ready, approval needed, decided, question asked, execution
                      finished or failed to URL (repeatable; team server only). slack:URL (or a
                      hooks.slack.com URL) gets Slack's incoming-webhook form; generic:URL (or
                      any other) a JSON body signed with HMAC-SHA256 (X-Ultraplan-Signature)
  --notify-webhook-secret-file FILE
                      the HMAC key for generic webhooks, from FILE (0600) or a pipe
  --notify-include-plan
                      put the plan's text in notifications (left out by default)
  --notify-link-base URL
                      the address people open sessions at (default: --public-url, else the
                      listening address)
`;

export class NotifyOptionsError extends Error {}

export interface NotifySettings {
  notifier: WebhookNotifier;
  linkBase: string | null;
}

type NotifyValues = {
  'notify-webhook'?: string[] | undefined;
  'notify-webhook-secret-file'?: string | undefined;
  'notify-include-plan'?: boolean | undefined;
  'notify-link-base'?: string | undefined;
};

/** The notifier the flags ask for; null without --notify-webhook. */
export async function notifySettingsFrom(
  values: NotifyValues,
  context: { postgres: boolean; log: (line: string) => void; readSecret: (file: string) => Promise<string> },
): Promise<NotifySettings | null> {
  const urls = values['notify-webhook'] ?? [];
  if (urls.length === 0) {
    for (const flag of ['notify-webhook-secret-file', 'notify-link-base'] as const) {
      if (values[flag] !== undefined) throw new NotifyOptionsError(`--${flag} needs --notify-webhook`);
    }
    if (values['notify-include-plan']) throw new NotifyOptionsError('--notify-include-plan needs --notify-webhook');
    return null;
  }
  if (!context.postgres) {
    throw new NotifyOptionsError(
      '--notify-webhook is for the team server (--store postgres://…), where each event is posted by one replica',
    );
  }
  const targets = urls.map((url) => {
    try {
      return parseWebhookTarget(url);
    } catch (err) {
      throw new NotifyOptionsError(err instanceof Error ? err.message : String(err));
    }
  });
  const secretFile = values['notify-webhook-secret-file'];
  if (targets.some((t) => t.format === 'generic') && secretFile === undefined) {
    throw new NotifyOptionsError('a generic --notify-webhook is signed: give --notify-webhook-secret-file FILE');
  }
  const secret = secretFile === undefined ? undefined : await context.readSecret(secretFile);
  const linkBase = values['notify-link-base'] ?? null;
  if (linkBase !== null && !/^https?:\/\/[^/\s]+\/?$/.test(linkBase)) {
    throw new NotifyOptionsError(`--notify-link-base takes an origin such as https://plans.example.com, got ${JSON.stringify(linkBase)}`);
  }
  const notifier = new WebhookNotifier({
    targets,
    ...(secret !== undefined ? { secret } : {}),
    includePlan: values['notify-include-plan'] ?? false,
    log: context.log,
  });
  context.log(`ultraplan-server: notifications to ${targets.map((t) => t.label).join(', ')}`);
  return { notifier, linkBase: linkBase?.replace(/\/$/, '') ?? null };
}

/** Where a session is opened: its /v1/code/sessions link ("Attach to Session…" takes it). */
export function sessionLink(base: string, sessionId: string): string {
  return `${base}/v1/code/sessions/${toCodeSessionId(sessionId)}`;
}
