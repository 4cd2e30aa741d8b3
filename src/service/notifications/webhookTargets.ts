// Where notifications go, from `--notify-webhook URL` (repeatable): a Slack incoming webhook
// (a hooks.slack.com address, or any address written `slack:URL`, for Slack-compatible chats
// such as Mattermost) or a generic receiver (`generic:URL` or any other address), which gets
// the signed JSON. A webhook address is itself a secret (whoever holds a Slack one can post to
// the channel): logs name a target by its origin only.
export type WebhookFormat = 'slack' | 'generic';

export interface WebhookTarget {
  readonly url: string;
  readonly format: WebhookFormat;
  /** For logs: the format and the origin, never the path or query. */
  readonly label: string;
}

export function parseWebhookTarget(value: string): WebhookTarget {
  const prefixed = /^(slack|generic):(?=https?:)/i.exec(value);
  const address = prefixed ? value.slice(prefixed[0].length) : value;
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new Error(`--notify-webhook ${redact(address)}: not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`--notify-webhook: ${url.protocol} is not http(s)`);
  if (url.username || url.password) throw new Error(`--notify-webhook ${url.origin}: credentials in the URL are not accepted`);
  const format: WebhookFormat = prefixed
    ? (prefixed[1]?.toLowerCase() as WebhookFormat)
    : url.hostname === 'hooks.slack.com'
      ? 'slack'
      : 'generic';
  return { url: url.href, format, label: `${format} webhook ${url.origin}` };
}

function redact(text: string): string {
  return text.length > 24 ? `${text.slice(0, 24)}…` : text;
}
