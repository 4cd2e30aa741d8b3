// The Jules REST API (v1alpha) as its reference defines it (docs/jules.md quotes the fields and
// their pages). What we send is strict: only the reference's input fields. What we read is
// lenient about fields we do not read (an API in alpha adds some) and strict about the ones we do.
import * as z from 'zod';

export const JULES_API_BASE_URL = 'https://jules.googleapis.com/v1alpha';

/** sessions.State (https://developers.google.com/jules/api/reference/rest/v1alpha/sessions#State). */
export const JULES_SESSION_STATES = [
  'STATE_UNSPECIFIED',
  'QUEUED',
  'PLANNING',
  'AWAITING_PLAN_APPROVAL',
  'AWAITING_USER_FEEDBACK',
  'IN_PROGRESS',
  'PAUSED',
  'FAILED',
  'COMPLETED',
] as const;
export type JulesSessionState = (typeof JULES_SESSION_STATES)[number];

const Bounded = z.string().max(100_000);

/** The body of sessions.create: a Session's input fields. */
export const JulesCreateSessionSchema = z.strictObject({
  prompt: z.string().min(1).max(100_000),
  title: z.string().min(1).max(500).optional(),
  sourceContext: z.strictObject({
    source: z.string().regex(/^sources\/.+/),
    githubRepoContext: z.strictObject({ startingBranch: z.string().min(1).max(1_000) }).optional(),
  }),
  requirePlanApproval: z.boolean().optional(),
  automationMode: z.enum(['AUTOMATION_MODE_UNSPECIFIED', 'AUTO_CREATE_PR']).optional(),
});
export type JulesCreateSession = z.infer<typeof JulesCreateSessionSchema>;

/** The body of sessions.sendMessage. */
export const JulesSendMessageSchema = z.strictObject({ prompt: z.string().min(1).max(100_000) });

export const JulesSessionSchema = z.looseObject({
  name: z.string().regex(/^sessions\/[^/]+$/),
  id: z.string().min(1).max(200),
  prompt: Bounded.optional(),
  title: Bounded.optional(),
  // An unknown state is kept as text: the follower treats it as running.
  state: z.union([z.enum(JULES_SESSION_STATES), z.string().max(100)]).optional(),
  url: z.string().max(2_000).optional(),
  createTime: z.string().max(100).optional(),
  updateTime: z.string().max(100).optional(),
});
export type JulesSession = z.infer<typeof JulesSessionSchema>;

export const JulesPlanStepSchema = z.looseObject({
  id: z.string().max(200).optional(),
  title: Bounded.optional(),
  description: Bounded.optional(),
  index: z.number().int().min(0).optional(),
});
export type JulesPlanStep = z.infer<typeof JulesPlanStepSchema>;

export const JulesPlanSchema = z.looseObject({
  id: z.string().min(1).max(200),
  steps: z.array(JulesPlanStepSchema).max(1_000).optional(),
  createTime: z.string().max(100).optional(),
});
export type JulesPlan = z.infer<typeof JulesPlanSchema>;

const GitPatchSchema = z.looseObject({
  unidiffPatch: z.string().max(5_000_000).optional(),
  baseCommitId: z.string().max(200).optional(),
  suggestedCommitMessage: Bounded.optional(),
});

export const JulesArtifactSchema = z.looseObject({
  changeSet: z.looseObject({ source: z.string().max(1_000).optional(), gitPatch: GitPatchSchema.optional() }).optional(),
  bashOutput: z
    .looseObject({ command: Bounded.optional(), output: z.string().optional(), exitCode: z.number().int().optional() })
    .optional(),
  media: z.looseObject({ mimeType: z.string().max(200).optional() }).optional(),
});
export type JulesArtifact = z.infer<typeof JulesArtifactSchema>;

/** An Activity: its fields and the union `activity`, exactly one of the members below. */
export const JulesActivitySchema = z.looseObject({
  name: z.string().regex(/^sessions\/[^/]+\/activities\/[^/]+$/),
  id: z.string().min(1).max(200),
  description: Bounded.optional(),
  createTime: z.string().max(100).optional(),
  originator: z.string().max(100).optional(),
  artifacts: z.array(JulesArtifactSchema).max(1_000).optional(),
  agentMessaged: z.looseObject({ agentMessage: Bounded.optional() }).optional(),
  userMessaged: z.looseObject({ userMessage: Bounded.optional() }).optional(),
  planGenerated: z.looseObject({ plan: JulesPlanSchema }).optional(),
  planApproved: z.looseObject({ planId: z.string().min(1).max(200) }).optional(),
  progressUpdated: z.looseObject({ title: Bounded.optional(), description: Bounded.optional() }).optional(),
  sessionCompleted: z.looseObject({}).optional(),
  sessionFailed: z.looseObject({ reason: Bounded.optional() }).optional(),
});
export type JulesActivity = z.infer<typeof JulesActivitySchema>;

export const JulesActivityPageSchema = z.looseObject({
  // The reference's JSON mapping omits an empty list.
  activities: z.array(z.unknown()).max(100).optional(),
  nextPageToken: z.string().max(10_000).optional(),
});

/** sessions.list's answer (ListSessionsResponse); each session is parsed on its own, as activities are. */
export const JulesSessionPageSchema = z.looseObject({
  // The reference's JSON mapping omits an empty list.
  sessions: z.array(z.unknown()).max(100).optional(),
  nextPageToken: z.string().max(10_000).optional(),
});

/** google.rpc.Status as Google's APIs return it on an error. */
export const GoogleErrorSchema = z.looseObject({
  error: z.looseObject({
    code: z.number().int().optional(),
    message: z.string().max(10_000).optional(),
    status: z.string().max(100).optional(),
    details: z.array(z.looseObject({ reason: z.string().max(200).optional() })).optional(),
  }),
});
