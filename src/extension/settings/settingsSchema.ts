// The extension's settings, validated with zod when read (the user's settings.json is input like
// any other). Pure: it is given a reader, so unit tests run without VS Code.
import * as z from 'zod';
import { AFTER_APPROVAL_VALUES, OUTSIDE_ACCESS_VALUES } from '../../core/agentSettings';
import { BACKEND_KINDS } from '../../core/backendKinds';
import { AGENT_CHOICES } from '../agentSetup/agentChoice';

/** auto: each agent of the local service in a sandbox of its own where this machine can; off: never. */
export const LOCAL_SANDBOX_CHOICES = ['auto', 'off'] as const;

/** Backends the extension can use: the local session service, a self-hosted server, Claude Code on the web. */
export const SETTINGS_BACKENDS = BACKEND_KINDS;

/** Claude Code on the web's API (tests point ultraplan.claudeWeb.baseUrl at a local stand-in). */
export const CLAUDE_WEB_DEFAULT_BASE_URL = 'https://api.anthropic.com';
/** The Jules API (tests point ultraplan.jules.baseUrl at the stand-in of test/support/jules). */
export const JULES_DEFAULT_BASE_URL = 'https://jules.googleapis.com/v1alpha';
export const TELEPORT_TARGETS = ['ask', 'chat', 'task', 'file'] as const;
export type TeleportTarget = (typeof TELEPORT_TARGETS)[number];

/** The placeholder in `ultraplan.teleport.taskCommand` replaced by the plan file's path. */
export const PLAN_FILE_PLACEHOLDER = '${planFile}';

const httpUrl = z
  .string()
  .trim()
  .refine((s) => {
    if (s === '') return true; // unset; checked where the server backend is used
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL, e.g. http://127.0.0.1:8787');

const relativeOrAbsolutePath = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .refine((s) => !s.split(/[\\/]/).includes('..'), 'must not contain ".." (plans stay inside the folder you name)');

// One schema per key, so a bad value is reported against its own key and the others still work.
export const SETTING_SCHEMAS = {
  backend: z.enum(SETTINGS_BACKENDS, { error: `must be one of: ${SETTINGS_BACKENDS.join(', ')}` }),
  'server.url': httpUrl,
  pollIntervalMs: z
    .number({ error: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(250, 'must be at least 250 ms')
    .max(60_000, 'must be at most 60000 ms'),
  timeoutMinutes: z
    .number({ error: 'must be a number of minutes' })
    .positive('must be more than 0 minutes')
    .max(24 * 60, 'must be at most 1440 minutes (a day)'),
  plansDirectory: relativeOrAbsolutePath,
  'plansOnDisk.includeHome': z.boolean({ error: 'must be true or false' }),
  'teleport.target': z.enum(TELEPORT_TARGETS, { error: `must be one of: ${TELEPORT_TARGETS.join(', ')}` }),
  'teleport.taskCommand': z
    .array(z.string({ error: 'each argument must be a string' }), {
      error: 'must be a list of arguments, e.g. ["my-agent", "--plan", "${planFile}"]',
    })
    .refine((a) => a.length === 0 || (a[0] ?? '').trim().length > 0, 'its first element (the program) must not be empty'),
  'teleport.archiveRemote': z.boolean({ error: 'must be true or false' }),
  'embedded.scenario': z.string({ error: 'must be a path to a scenario file (or empty for the demo)' }).trim(),
  'embedded.idleExitMinutes': z
    .number({ error: 'must be a number of minutes' })
    .min(0, 'must be 0 (never) or more minutes')
    .max(7 * 24 * 60, 'must be at most 10080 minutes (a week)'),
  'localService.sandbox': z.enum(LOCAL_SANDBOX_CHOICES, { error: `must be one of: ${LOCAL_SANDBOX_CHOICES.join(', ')}` }),
  'agent.choice': z.enum(AGENT_CHOICES, { error: `must be one of: ${AGENT_CHOICES.join(', ')}` }),
  'agent.command': z
    .array(z.string({ error: 'each argument must be a string' }), {
      error: 'must be a list of arguments, e.g. ["my-agent", "--acp"] (no shell: one element per argument)',
    })
    .refine((a) => a.length === 0 || (a[0] ?? '').trim().length > 0, 'its first element (the program) must not be empty'),
  afterApproval: z.enum(AFTER_APPROVAL_VALUES, { error: `must be one of: ${AFTER_APPROVAL_VALUES.join(', ')}` }),
  'agent.firstEventTimeoutSeconds': z
    .number({ error: 'must be a number of seconds' })
    .min(5, 'must be at least 5 seconds')
    .max(3600, 'must be at most 3600 seconds (an hour)'),
  'agent.noAgentNotice': z.boolean({ error: 'must be true or false' }),
  notifications: z.boolean({ error: 'must be true or false' }),
  'agent.outsideAccess': z.enum(OUTSIDE_ACCESS_VALUES, { error: `must be one of: ${OUTSIDE_ACCESS_VALUES.join(', ')}` }),
  'claudeWeb.environmentId': z
    .string({ error: 'must be an environment id such as "env_…" (or empty to let Ultraplan choose)' })
    .trim()
    .refine((s) => !/\s/.test(s), 'must be a single environment id without spaces, e.g. env_01abc'),
  'claudeWeb.baseUrl': httpUrl.refine((s) => s !== '', `must not be empty (the default is ${CLAUDE_WEB_DEFAULT_BASE_URL})`),
  'jules.baseUrl': httpUrl.refine((s) => s !== '', `must not be empty (the default is ${JULES_DEFAULT_BASE_URL})`),
} as const;

export type SettingKey = keyof typeof SETTING_SCHEMAS;

export const SETTING_DEFAULTS: { [K in SettingKey]: z.output<(typeof SETTING_SCHEMAS)[K]> } = {
  backend: 'embedded',
  'server.url': '',
  pollIntervalMs: 3000,
  timeoutMinutes: 90,
  plansDirectory: '.ultraplan/plans',
  'plansOnDisk.includeHome': true,
  'teleport.target': 'ask',
  'teleport.taskCommand': [],
  'teleport.archiveRemote': true,
  'embedded.scenario': '',
  'embedded.idleExitMinutes': 30,
  'localService.sandbox': 'auto',
  'agent.choice': 'auto',
  'agent.command': [],
  afterApproval: 'default',
  'agent.firstEventTimeoutSeconds': 120,
  'agent.noAgentNotice': true,
  notifications: true,
  'agent.outsideAccess': 'ask',
  'claudeWeb.environmentId': '',
  'claudeWeb.baseUrl': CLAUDE_WEB_DEFAULT_BASE_URL,
  'jules.baseUrl': JULES_DEFAULT_BASE_URL,
};

export type UltraplanSettings = typeof SETTING_DEFAULTS;

export interface SettingProblem {
  /** The full key, e.g. "ultraplan.pollIntervalMs". */
  key: string;
  message: string;
}

export interface SettingsRead {
  /** Valid values; a key with a bad value falls back to its default here. */
  settings: UltraplanSettings;
  problems: SettingProblem[];
}

/** Reads every key through `get` (undefined = not set, so the default applies) and validates it. */
export function parseSettings(get: (key: SettingKey) => unknown): SettingsRead {
  const settings = { ...SETTING_DEFAULTS } as Record<SettingKey, unknown>;
  const problems: SettingProblem[] = [];
  for (const key of Object.keys(SETTING_SCHEMAS) as SettingKey[]) {
    const raw = get(key);
    if (raw === undefined || raw === null) continue;
    const parsed = SETTING_SCHEMAS[key].safeParse(raw);
    if (parsed.success) {
      settings[key] = parsed.data;
    } else {
      const issue = parsed.error.issues[0];
      problems.push({
        key: `ultraplan.${key}`,
        message: `ultraplan.${key} ${issue?.message ?? 'is not valid'} (got ${JSON.stringify(raw)}).`,
      });
    }
  }
  return { settings: settings as UltraplanSettings, problems };
}

/** Problems that only exist for the chosen backend (e.g. the server backend without a URL). */
export function backendProblems(settings: UltraplanSettings): SettingProblem[] {
  if (settings.backend === 'server' && settings['server.url'] === '') {
    return [
      {
        key: 'ultraplan.server.url',
        message: 'ultraplan.backend is "server" but ultraplan.server.url is not set; set it to your ultraplan-server address.',
      },
    ];
  }
  return [];
}

/**
 * The task's argv with the plan file as its own argument: each element equal to "${planFile}"
 * is replaced by the path; without one, the path is appended. Never joined into a shell line.
 */
export function taskArgv(command: readonly string[], planFile: string): { command: string; args: string[] } {
  const [program, ...rest] = command;
  if (program === undefined) throw new Error('ultraplan.teleport.taskCommand is empty');
  const hasPlaceholder = rest.includes(PLAN_FILE_PLACEHOLDER);
  const args = rest.map((a) => (a === PLAN_FILE_PLACEHOLDER ? planFile : a));
  if (!hasPlaceholder) args.push(planFile);
  return { command: program, args };
}
