// Wire schemas for the Sessions API and the SDK message stream (docs/protocol.md sections 1-2).
// Lenient where the wire is (unknown event types and unknown fields pass through, so a newer
// server never breaks an older client), strict where we decide (what we send).
import * as z from 'zod';
import { AGENT_MODE_SUBTYPE, ULTRAPLAN_TELEPORT_SENTINEL } from './protocolMarkers';

export {
  AGENT_LOST_SUBTYPE,
  AGENT_RESTARTED_SUBTYPE,
  AGENT_RESUMED_SUBTYPE,
  AGENT_MODE_SUBTYPE,
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  EXIT_PLAN_MODE_TOOL,
  ULTRAPLAN_TELEPORT_SENTINEL,
  agentModeEvent,
} from './protocolMarkers';

export const ANTHROPIC_VERSION = '2023-06-01';
export const CCR_BETA = 'ccr-byoc-2025-07-29';

// ---------------------------------------------------------------------------------------------
// Content blocks

export const TextBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
export type TextBlock = z.infer<typeof TextBlockSchema>;

export const ToolUseBlockSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;

/** A tool_result's content: a string or a list of text blocks (other blocks are tolerated). */
export const ToolResultContentSchema = z.union([z.string(), z.array(z.union([TextBlockSchema, z.looseObject({ type: z.string() })]))]);

export const ToolResultBlockSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: ToolResultContentSchema.optional(),
  is_error: z.boolean().optional(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlockSchema>;

/** Any other block type (thinking, image, …) is kept as-is. */
export const OtherBlockSchema = z.looseObject({ type: z.string() });

export const ContentBlockSchema = z.union([TextBlockSchema, ToolUseBlockSchema, ToolResultBlockSchema, OtherBlockSchema]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

// ---------------------------------------------------------------------------------------------
// Events (the SDK message stream). Every event may carry a server-assigned `id` (the cursor).

const eventBase = {
  id: z.string().optional(),
  uuid: z.string().optional(),
  session_id: z.string().optional(),
};

export const AssistantEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal('assistant'),
  parent_tool_use_id: z.string().nullable().optional(),
  message: z.looseObject({
    role: z.literal('assistant'),
    content: z.array(ContentBlockSchema),
  }),
});
export type AssistantEvent = z.infer<typeof AssistantEventSchema>;

export const UserEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal('user'),
  parent_tool_use_id: z.string().nullable().optional(),
  message: z.looseObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(ContentBlockSchema)]),
  }),
});
export type UserEvent = z.infer<typeof UserEventSchema>;

export const RESULT_ERROR_SUBTYPES = [
  'error_during_execution',
  'error_max_turns',
  'error_max_budget_usd',
  'error_max_structured_output_retries',
] as const;

export const ResultEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal('result'),
  // Lenient: an unknown subtype other than success still ends the session as an error.
  subtype: z.string(),
  is_error: z.boolean().optional(),
  num_turns: z.number().optional(),
  result: z.string().optional(),
  errors: z.array(z.string()).optional(),
});
export type ResultEvent = z.infer<typeof ResultEventSchema>;

export const SystemEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal('system'),
  subtype: z.string(),
});
export type SystemEvent = z.infer<typeof SystemEventSchema>;

const ModeIdSchema = z.string().min(1).max(200);

/** Our own `system` event: the agent reported its current mode (protocolMarkers.ts writes it). */
export const AgentModeEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal('system'),
  subtype: z.literal(AGENT_MODE_SUBTYPE),
  mode: z.looseObject({ id: ModeIdSchema, name: z.string().max(200).optional() }),
  /** The session host keeps the agent read-only (its plan is not approved yet), whatever the mode says. */
  read_only: z.boolean().optional(),
});
export type AgentModeEvent = z.infer<typeof AgentModeEventSchema>;

/**
 * The other system events that name a mode: Claude Code's `init` (`permissionMode`, at the start of
 * each turn) and `status` (`permissionMode` when it changes); our session host's `init` carries the
 * agent's own mode id as `agent.mode`.
 */
export const ModeCarryingSystemEventSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.enum(['init', 'status']),
  permissionMode: ModeIdSchema.optional(),
  agent: z.looseObject({ mode: ModeIdSchema.nullish() }).nullish(),
});

export const CanUseToolRequestSchema = z.looseObject({
  subtype: z.literal('can_use_tool'),
  tool_name: z.string(),
  input: z.unknown(),
  tool_use_id: z.string(),
});

export const SetPermissionModeRequestSchema = z.looseObject({
  subtype: z.literal('set_permission_mode'),
  mode: z.string(),
  ultraplan: z.boolean().optional(),
});

export const ControlRequestEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal('control_request'),
  request_id: z.string(),
  request: z.union([CanUseToolRequestSchema, SetPermissionModeRequestSchema, z.looseObject({ subtype: z.string() })]),
});
export type ControlRequestEvent = z.infer<typeof ControlRequestEventSchema>;

/** The reviewer's decision on a can_use_tool request. Strict: we write these. */
export const PermissionDecisionSchema = z.discriminatedUnion('behavior', [
  z.strictObject({ behavior: z.literal('allow'), updatedInput: z.record(z.string(), z.unknown()) }),
  z.strictObject({ behavior: z.literal('deny'), message: z.string() }),
]);
export type PermissionDecision = z.infer<typeof PermissionDecisionSchema>;

export const ControlResponseEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal('control_response'),
  response: z.looseObject({
    subtype: z.enum(['success', 'error']),
    request_id: z.string(),
    response: PermissionDecisionSchema.optional(),
    error: z.string().optional(),
  }),
});
export type ControlResponseEvent = z.infer<typeof ControlResponseEventSchema>;

export const KNOWN_EVENT_TYPES = ['assistant', 'user', 'result', 'system', 'control_request', 'control_response'] as const;

/** Any event on the wire: an object with a string `type`. Unknown types pass through. */
export const AnyEventSchema = z.looseObject({ type: z.string(), id: z.string().optional() });
export type AnyEvent = z.infer<typeof AnyEventSchema>;

export const KnownEventSchema = z.discriminatedUnion('type', [
  AssistantEventSchema,
  UserEventSchema,
  ResultEventSchema,
  SystemEventSchema,
  ControlRequestEventSchema,
  ControlResponseEventSchema,
]);
export type KnownEvent = z.infer<typeof KnownEventSchema>;

/**
 * Event types a reader skips (docs/protocol.md section 1). A `control_response` is read, for the
 * request it answers only (eventBatch.ts): a permission answered in one window closes everywhere.
 */
export const SKIPPED_EVENT_TYPES: ReadonlySet<string> = new Set(['env_manager_log']);

// ---------------------------------------------------------------------------------------------
// Sessions API resources

export const SESSION_STATUSES = ['running', 'idle', 'requires_action', 'archived'] as const;
export const SessionStatusSchema = z.enum(SESSION_STATUSES);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

export const GitRepositorySourceSchema = z.looseObject({
  type: z.literal('git_repository'),
  url: z.string(),
  revision: z.string().optional(),
});

export const SessionContextSchema = z.looseObject({
  sources: z.array(z.looseObject({ type: z.string() })).optional(),
  outcomes: z.array(z.looseObject({ type: z.string() })).optional(),
  model: z.string().optional(),
});
export type SessionContext = z.infer<typeof SessionContextSchema>;

export const SessionResourceSchema = z.looseObject({
  type: z.literal('session'),
  id: z.string().min(1),
  title: z.string(),
  session_status: z.union([SessionStatusSchema, z.string()]),
  environment_id: z.string().nullable().optional(),
  created_at: z.string(),
  updated_at: z.string(),
  session_context: SessionContextSchema.nullable().optional(),
});
export type SessionResource = z.infer<typeof SessionResourceSchema>;

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    data: z.array(item),
    has_more: z.boolean(),
    first_id: z.string().nullable().optional(),
    last_id: z.string().nullable().optional(),
  });
}

export const SessionListSchema = pageSchema(SessionResourceSchema);
/** Event pages are read item by item: one malformed item must not discard its page. */
export const EventPageSchema = pageSchema(z.unknown());
export type EventPage = z.infer<typeof EventPageSchema>;

export const CreateSessionRequestSchema = z.looseObject({
  title: z.string().min(1).max(500),
  events: z.array(z.strictObject({ type: z.literal('event'), data: AnyEventSchema })),
  session_context: SessionContextSchema.optional(),
  environment_id: z.string().optional(),
});
export type CreateSessionRequest = z.infer<typeof CreateSessionRequestSchema>;

export const SendEventsRequestSchema = z.looseObject({
  events: z.array(AnyEventSchema).min(1),
});
export type SendEventsRequest = z.infer<typeof SendEventsRequestSchema>;

export const ErrorBodySchema = z.looseObject({
  type: z.literal('error'),
  error: z.looseObject({ type: z.string(), message: z.string() }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * `error.reason` of a request a server refused before reading it (its shape, not its token: a
 * browser's cross-site request, a foreign Host), so a client can say so instead of "bad token".
 */
export const REQUEST_REFUSED_REASON = 'request_refused';

// ---------------------------------------------------------------------------------------------
// Builders for what we send

export function setPlanModeEvent(requestId: string): AnyEvent {
  return {
    type: 'control_request',
    request_id: requestId,
    request: { subtype: 'set_permission_mode', mode: 'plan', ultraplan: true },
  };
}

/** A planning session's creation request: plan mode, then the task. */
export function planningSessionRequest(prompt: string, title: string, newId: () => string): CreateSessionRequest {
  return {
    title,
    events: [
      { type: 'event', data: setPlanModeEvent(`set-mode-${newId()}`) },
      { type: 'event', data: userMessageEvent(prompt) },
    ],
  };
}

export function userMessageEvent(text: string, extra: Record<string, unknown> = {}): AnyEvent {
  return {
    type: 'user',
    parent_tool_use_id: null,
    message: { role: 'user', content: text },
    ...extra,
  };
}

export function controlResponseEvent(requestId: string, decision: PermissionDecision): AnyEvent {
  return {
    type: 'control_response',
    response: { subtype: 'success', request_id: requestId, response: PermissionDecisionSchema.parse(decision) },
  };
}

/** The deny message that teleports a plan (docs/protocol.md section 3). */
export function teleportDenyMessage(plan: string): string {
  return `${ULTRAPLAN_TELEPORT_SENTINEL}\n${plan}`;
}

/**
 * Reads a tool_result or message content (string or text blocks) as one string. A tool_result's
 * blocks are joined with no separator, as Claude Code joins them before it looks for the approval
 * and teleport markers (a marker may be split across blocks); a person's message keeps its blocks
 * apart with a newline.
 */
export function contentText(content: unknown, separator: '' | '\n' = ''): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content) {
    if (block && typeof block === 'object' && (block as { type?: unknown }).type === 'text') {
      const text = (block as { text?: unknown }).text;
      if (typeof text === 'string') parts.push(text);
    }
  }
  return parts.join(separator);
}
