// What `/v1/service` answers (src/sessions/server/serviceRoutes.ts), parsed where it enters.
import * as z from 'zod';

export const ServiceStatusSchema = z.looseObject({
  type: z.literal('service'),
  version: z.string(),
  pid: z.number().int().positive(),
  started_at: z.string(),
  sessions: z.number().int().nonnegative(),
  live_sessions: z.number().int().nonnegative(),
  stopping: z.boolean(),
});
export type ServiceStatus = z.infer<typeof ServiceStatusSchema>;
