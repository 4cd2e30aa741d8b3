// Which cloud environment a remote session runs in (PROTOCOL.md section 9). Pure.
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

export const EnvironmentListSchema = z.looseObject({ environments: z.array(EnvironmentSchema) });

/**
 * The user's setting if it names a listed environment, else the first anthropic_cloud, else the
 * first that is not a bridge (a bridge runs on someone's own machine, not in the cloud).
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
  const chosen = environments.find((e) => e.kind === 'anthropic_cloud') ?? environments.find((e) => e.kind !== 'bridge');
  if (chosen) return chosen;
  throw new ClaudeWebError(
    'no_environment',
    `You have no Claude Code cloud environment${
      environments.length > 0 ? ' (only bridges to local machines, which cannot host a remote plan)' : ''
    }. Set one up at ${CLAUDE_CODE_WEB_URL}, then choose Retry.`,
    { url: CLAUDE_CODE_WEB_URL },
  );
}

export function describeEnvironment(environment: Environment): string {
  const name = environment.name?.trim() || environment.environment_id;
  return `${name} (${environment.kind})`;
}
