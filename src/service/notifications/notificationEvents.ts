// What a webhook is told, and in which form: a notification event (parsed once, here) and the two
// bodies made from it, the generic JSON (signed by the sender) and a Slack incoming-webhook
// message. The plan's text is model output and may hold code or secrets from the repository: it
// is left out unless the server was started with --notify-include-plan.
import * as z from 'zod';

export const NOTIFICATION_KINDS = [
  'plan_ready',
  'approval_needed',
  'decided',
  'question_asked',
  'execution_finished',
  'execution_failed',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const NotificationEventSchema = z.strictObject({
  kind: z.enum(NOTIFICATION_KINDS),
  /** When it happened, ISO 8601. */
  at: z.iso.datetime({ offset: true }),
  session: z.strictObject({ id: z.string().min(1).max(200), title: z.string().max(500).nullable() }),
  /** Where a person opens the session's review (the server's web page or an editor link). */
  link: z.url({ protocol: /^(https?|vscode|vscode-insiders)$/ }),
  /** Who is needed: names of people or review groups; empty when nobody is. */
  needed: z.array(z.string().min(1).max(256)).max(100),
  /** For `decided`: what was decided, and by whom. */
  decision: z.enum(['approved', 'rejected']).optional(),
  decidedBy: z.string().max(256).optional(),
  /** The plan's revision the event is about. */
  revision: z.number().int().positive().optional(),
  /** The plan's text; sent only when the server is told to. */
  plan: z.string().max(200_000).optional(),
});
export type NotificationEvent = z.infer<typeof NotificationEventSchema>;

export const GENERIC_PAYLOAD_TYPE = 'ultraplan.notification';

export const GenericPayloadSchema = z.strictObject({
  type: z.literal(GENERIC_PAYLOAD_TYPE),
  version: z.literal(1),
  /** Unique per notification (the same on each retry), so a receiver can drop a repeat. */
  id: z.string().uuid(),
  kind: z.enum(NOTIFICATION_KINDS),
  at: z.string(),
  summary: z.string(),
  session: NotificationEventSchema.shape.session,
  link: z.string(),
  needed: z.array(z.string()),
  decision: NotificationEventSchema.shape.decision,
  decided_by: z.string().optional(),
  revision: z.number().optional(),
  plan: z.string().optional(),
});
export type GenericPayload = z.infer<typeof GenericPayloadSchema>;

export interface PayloadOptions {
  includePlan: boolean;
}

const HEADLINES: Record<NotificationKind, string> = {
  plan_ready: 'Plan ready for review',
  approval_needed: 'Approval needed',
  decided: 'Plan decided',
  question_asked: 'The agent asked a question',
  execution_finished: 'Execution finished',
  execution_failed: 'Execution failed',
};

/** One line a person reads in a chat or a log. */
export function summaryOf(event: NotificationEvent): string {
  const title = event.session.title ?? event.session.id;
  const revision = event.revision && event.revision > 1 ? ` (revision ${event.revision})` : '';
  const decided = event.kind === 'decided' && event.decision ? `: ${event.decision}${event.decidedBy ? ` by ${event.decidedBy}` : ''}` : '';
  const needed = event.needed.length > 0 ? `; needed: ${event.needed.join(', ')}` : '';
  return `${HEADLINES[event.kind]}${decided}: ${title}${revision}${needed}`;
}

export function genericPayload(event: NotificationEvent, id: string, options: PayloadOptions): GenericPayload {
  return {
    type: GENERIC_PAYLOAD_TYPE,
    version: 1,
    id,
    kind: event.kind,
    at: event.at,
    summary: summaryOf(event),
    session: event.session,
    link: event.link,
    needed: event.needed,
    ...(event.decision ? { decision: event.decision } : {}),
    ...(event.decidedBy ? { decided_by: event.decidedBy } : {}),
    ...(event.revision ? { revision: event.revision } : {}),
    ...(options.includePlan && event.plan !== undefined ? { plan: event.plan } : {}),
  };
}

/** The Slack incoming-webhook message: `text` (also the notification's fallback) and one section. */
export interface SlackPayload {
  text: string;
  blocks: { type: 'section'; text: { type: 'mrkdwn'; text: string } }[];
}

/** Slack's limit for a section's text. */
const SLACK_SECTION_LIMIT = 3000;

export function slackPayload(event: NotificationEvent, options: PayloadOptions): SlackPayload {
  const title = slackEscape(event.session.title ?? event.session.id);
  const headline = `${HEADLINES[event.kind]}${event.kind === 'decided' && event.decision ? ` (${event.decision}${event.decidedBy ? ` by ${slackEscape(event.decidedBy)}` : ''})` : ''}`;
  const needed = event.needed.length > 0 ? `\nNeeded: ${event.needed.map(slackEscape).join(', ')}` : '';
  const text = `${headline}: <${event.link}|${title}>${needed}`;
  const blocks: SlackPayload['blocks'] = [{ type: 'section', text: { type: 'mrkdwn', text } }];
  if (options.includePlan && event.plan !== undefined) {
    const fence = '```';
    const room = SLACK_SECTION_LIMIT - 2 * fence.length - 2;
    const plan = event.plan.length > room ? `${event.plan.slice(0, room - 1)}…` : event.plan;
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `${fence}\n${slackEscape(plan)}\n${fence}`.slice(0, SLACK_SECTION_LIMIT) },
    });
  }
  return { text, blocks };
}

/** Slack's three control characters in mrkdwn (a title could otherwise make a link or a mention). */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
