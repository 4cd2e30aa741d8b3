// What `/v1/service` answers (src/service/http/serviceRoutes.ts): the local service's own wire, which its
// clients parse where it enters.
import * as z from 'zod';
import { EnvFingerprintSchema } from './envFingerprint';

/** `--sandbox`: whether the service runs each agent in a sandbox of its own (src/service/sandboxFlag.ts). */
export const SANDBOX_MODES = ['auto', 'required', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** What the service was asked for and what it does: a window compares the first, a person reads the rest. */
export const ServiceSandboxSchema = z.looseObject({
  mode: z.enum(SANDBOX_MODES),
  sandboxed: z.boolean(),
  /** Why agents run unsandboxed (the platform, a missing program); absent when sandboxed or turned off. */
  reason: z.string().optional(),
});
export type ServiceSandbox = z.infer<typeof ServiceSandboxSchema>;

export const ServiceStatusSchema = z.looseObject({
  type: z.literal('service'),
  version: z.string(),
  pid: z.number().int().positive(),
  started_at: z.string(),
  sessions: z.number().int().nonnegative(),
  live_sessions: z.number().int().nonnegative(),
  stopping: z.boolean(),
  /** What its agents run with (core/envFingerprint.ts); absent from a service of a version without it. */
  environment: EnvFingerprintSchema.optional(),
  /** Whether its agents are sandboxed; absent from a service of a version without it. */
  sandbox: ServiceSandboxSchema.optional(),
});
export type ServiceStatus = z.infer<typeof ServiceStatusSchema>;
