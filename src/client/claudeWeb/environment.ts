// Which cloud environment a remote session runs in (docs/protocol.md section 9). Pure.
import * as z from 'zod';
import { CLAUDE_CODE_WEB_URL, ClaudeWebError } from './errors';

export const EnvironmentSchema = z.looseObject({
  kind: z.string(), // anthropic_cloud, byoc, bridge; unknown kinds are kept
  environment_id: z.string().min(1),
  name: z.string().nullable().optional(),
  created_at: z.string().nullable().optional(),
  state: z.string().nullable().optional(),
});
export type Environment = z.infer<typeof EnvironmentSchema>;

/** One page of GET /v1/environment_providers (paged with `after_id` while `has_more`). */
export const EnvironmentPageSchema = z.looseObject({
  environments: z.array(EnvironmentSchema),
  has_more: z.boolean().nullable().optional(),
  last_id: z.string().nullable().optional(),
});

/**
 * The user's setting if it names a listed environment, else the first anthropic_cloud (as Claude
 * Code chooses; other kinds are never a fallback).
 */
export function chooseEnvironment(environments: readonly Environment[], configuredId?: string): Environment {
  const wanted = configuredId?.trim();
  if (wanted) {
    const match = environments.find((e) => e.environment_id === wanted);
    if (match) return match;
    throw new ClaudeWebError(
      'no_environment',
      `The environment "${wanted}" in the setting ultraplan.claudeWeb.environmentId is not one of yours${
        environments.length > 0 ? ` (you have ${environments.map(describeEnvironment).join(', ')})` : ''
      }. Choose another with "Ultraplan: Choose Backend…", or clear the setting.`,
      { remedy: 'choose_environment' },
    );
  }
  const chosen = environments.find((e) => e.kind === 'anthropic_cloud');
  if (chosen) return chosen;
  throw new ClaudeWebError(
    'no_environment',
    `You have no Anthropic cloud environment for Claude Code${
      environments.length > 0 ? ` (only ${environments.map(describeEnvironment).join(', ')}, which Ultraplan does not launch on)` : ''
    }. Create one at ${CLAUDE_CODE_WEB_URL} (open it once and start a session; it makes a "Default" environment), then choose Retry.`,
    { url: CLAUDE_CODE_WEB_URL },
  );
}

export function describeEnvironment(environment: Environment): string {
  const name = environment.name?.trim() || environment.environment_id;
  return `${name} (${environment.kind})`;
}
