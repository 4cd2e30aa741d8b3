// What a client may write into a session: only what the agent will receive. Everything else
// (assistant/result/system events, tool_result blocks, its own can_use_tool requests, the create
// form posted as an event) would be stored as if the agent had said it, or stored and never
// delivered; both mislead every reader of the log. One set of rules for every route that takes
// client events, whatever envelope carries them.
import * as z from 'zod';
import {
  ControlResponseEventSchema,
  SetPermissionModeRequestSchema,
  UserEventSchema,
  contentText,
  type AnyEvent,
  type PermissionDecision,
} from '../../core/protocol';
import { SessionsError } from '../../core/errors';

/** Where the events come from: a session's creation, or a later append. */
export type ClientEventForm = 'create' | 'append';

export type ClientEvent =
  | { kind: 'user'; event: AnyEvent; text: string }
  | { kind: 'decision'; event: AnyEvent; requestId: string; decision: PermissionDecision }
  | { kind: 'set_mode'; event: AnyEvent };

export const USER_MESSAGE_SHAPE = '{"type":"user","message":{"role":"user","content":"<text>"}}';
export const DECISION_SHAPE =
  '{"type":"control_response","response":{"subtype":"success","request_id":"<id>","response":{"behavior":"allow","updatedInput":{…}} or {"behavior":"deny","message":"<text>"}}}';
export const SET_PLAN_MODE_SHAPE =
  '{"type":"control_request","request_id":"<id>","request":{"subtype":"set_permission_mode","mode":"plan"}}';

/** The shapes a route accepts, for the 400 that refuses anything else. */
export function expectedShapes(form: ClientEventForm): string {
  return form === 'create' ? `${SET_PLAN_MODE_SHAPE} (optional) and ${USER_MESSAGE_SHAPE}` : `${USER_MESSAGE_SHAPE} or ${DECISION_SHAPE}`;
}

// Only text reaches an agent (contentText), so any other block would be stored and dropped.
const ClientUserEventSchema = UserEventSchema.extend({
  message: z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(z.looseObject({ type: z.literal('text'), text: z.string() }))]),
  }),
});

const SetPlanModeEventSchema = z.looseObject({
  type: z.literal('control_request'),
  request_id: z.string().min(1),
  request: SetPermissionModeRequestSchema.extend({ mode: z.literal('plan') }),
});

/**
 * Checks one event a client sent; throws a 400 SessionsError naming `at` and the expected shape.
 * `raw` is any JSON value: the rules hold whichever route or envelope delivered it.
 */
export function parseClientEvent(raw: unknown, at: string, form: ClientEventForm): ClientEvent {
  const refuse = (why: string) => new SessionsError('bad_request', `${at}: ${why}; expected ${expectedShapes(form)}`, 400);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw refuse('an event is a JSON object');
  const type = (raw as { type?: unknown }).type;
  if (type === 'event' && 'data' in raw) {
    throw refuse(
      form === 'append'
        ? 'this is the creation form {"type":"event","data":…}; POST /v1/sessions/{id}/events takes the events themselves: {"events":[<event>…]}'
        : 'the creation form wraps each event once: {"type":"event","data":<event>}',
    );
  }
  if (type === 'user') {
    const user = ClientUserEventSchema.safeParse(raw);
    if (!user.success) {
      const content = (raw as { message?: { content?: unknown } }).message?.content;
      if (Array.isArray(content) && content.some((b) => (b as { type?: unknown } | null)?.type === 'tool_result')) {
        throw refuse('tool results come from the agent, not from a client');
      }
      throw refuse(`a user message holds text only (${zodText(user.error)})`);
    }
    const text = contentText(user.data.message.content, '\n');
    if (!text.trim()) throw refuse('a user message needs text');
    return { kind: 'user', event: user.data, text };
  }
  if (type === 'control_response' && form === 'append') {
    const response = ControlResponseEventSchema.safeParse(raw);
    if (!response.success) throw refuse(zodText(response.error));
    const { request_id: requestId, subtype, response: decision } = response.data.response;
    if (subtype !== 'success' || !decision) throw refuse('a control_response must be a success carrying a decision (allow or deny)');
    return { kind: 'decision', event: response.data, requestId, decision };
  }
  if (type === 'control_request' && form === 'create') {
    const request = SetPlanModeEventSchema.safeParse(raw);
    if (!request.success) throw refuse(`a client's only control_request is the switch to plan mode (${zodText(request.error)})`);
    return { kind: 'set_mode', event: request.data };
  }
  if (type === 'assistant' || type === 'result' || type === 'system') throw refuse(`only the agent writes "${type}" events`);
  if (type === 'control_request') throw refuse('control_requests (can_use_tool and others) come from the agent');
  throw refuse(`the agent receives no ${typeof type === 'string' ? `"${type}"` : 'untyped'} event here`);
}

/**
 * The creation events: at most one switch to plan mode and exactly one user message, the prompt
 * the agent starts with (a second one would be stored and never delivered).
 */
export function parseCreationEvents(raws: readonly unknown[]): { events: ClientEvent[]; prompt: string } {
  const events = raws.map((raw, index) => parseClientEvent(raw, `events[${index}].data`, 'create'));
  const users = events.filter((e) => e.kind === 'user');
  const modes = events.filter((e) => e.kind === 'set_mode');
  if (users.length !== 1 || modes.length > 1) {
    throw new SessionsError(
      'bad_request',
      `events must hold exactly one user message (the prompt) and at most one switch to plan mode, got ${users.length} and ${modes.length}; expected ${expectedShapes('create')}`,
      400,
    );
  }
  return { events, prompt: (users[0] as { text: string }).text };
}

/** The bounds on a batch of events every store enforces: how many, and each one's JSON size. */
export function checkEventBatch(
  events: readonly unknown[],
  limits: { maxEventsPerAppend: number; maxEventBytes: number },
  at: string,
): void {
  if (events.length > limits.maxEventsPerAppend) {
    throw new SessionsError('bad_request', `${at}: at most ${limits.maxEventsPerAppend} events at once, got ${events.length}`, 400);
  }
  events.forEach((event, index) => {
    const size = Buffer.byteLength(JSON.stringify(event) ?? '', 'utf8');
    if (size > limits.maxEventBytes) {
      throw new SessionsError(
        'bad_request',
        `${at}[${index}]: an event may hold at most ${limits.maxEventBytes} bytes, this one ${size}`,
        413,
      );
    }
  });
}

/** Whether a stored event came from a client (what a client may send: user text, decisions, the plan-mode switch). */
export function isClientEvent(event: { type: string } & Record<string, unknown>): boolean {
  if (typeof event.uuid !== 'string') return false;
  if (event.type === 'control_response') return true;
  if (event.type !== 'user') return false;
  const content = (event.message as { content?: unknown } | undefined)?.content;
  return !(Array.isArray(content) && content.some((b) => (b as { type?: unknown } | null)?.type === 'tool_result'));
}

function zodText(error: z.ZodError): string {
  return z.prettifyError(error).replace(/\s*\n\s*/g, '; ');
}
