// Which agent the embedded backend runs, from the settings and what this machine has installed.
// Pure (no vscode): detection results come in as data, so unit tests cover every branch.
import * as path from 'node:path';
import { KNOWN_AGENTS, KNOWN_AGENT_IDS, type DetectedAgent, type KnownAgentId } from '../../agents/catalogue';

/** `ultraplan.agent.choice`: `auto` = the first installed known agent, else the demo (with a notice). */
export const AGENT_CHOICES = ['auto', ...KNOWN_AGENT_IDS, 'custom', 'demo'] as const;
export type AgentChoice = (typeof AGENT_CHOICES)[number];

/** What the embedded backend will run for a new session. */
export type EmbeddedAgentPlan =
  | {
      kind: 'acp';
      id: KnownAgentId | 'custom';
      argv: string[];
      label: string;
      /** installed: on PATH (or a path that exists); npx: downloaded by npx on first use. */
      availability: 'installed' | 'npx';
    }
  | {
      kind: 'demo';
      /** chosen: `demo` was set; no_agent: `auto` found nothing installed. */
      why: 'chosen' | 'no_agent';
      /** For people, shown when a demo starts because nothing was found. */
      notice?: string;
    }
  | {
      kind: 'unavailable';
      /** What is wrong and how to fix it. */
      message: string;
      /** The setting to open (full key). */
      settingKey: string;
    };

export interface AgentDetection {
  known: readonly DetectedAgent[];
  /** The custom command, checked the same way (detectCustomAgent). */
  custom(argv: readonly string[]): DetectedAgent;
}

/**
 * The notice when `auto` finds no agent: what happens and how to get one. Short enough to read
 * whole in a notification (VS Code cuts a message at 1000 characters); every agent's install
 * command is in the log (noAgentInstallHints) and in "Choose Backend…".
 */
export function noAgentFoundNotice(): string {
  const first = KNOWN_AGENTS[0] as (typeof KNOWN_AGENTS)[number];
  return (
    'No ACP agent was found on PATH, so the embedded backend runs the scripted demo (not a real agent). ' +
    `Install one (${first.label}: ${first.installCommand}; "Ultraplan: Choose Backend…" lists all ${KNOWN_AGENTS.length} with their install commands), ` +
    'or set ultraplan.agent.choice to "custom" with ultraplan.agent.command.'
  );
}

/** Every known agent's install command, for the log beside the notice. */
export function noAgentInstallHints(): string {
  return KNOWN_AGENTS.map((agent) => `${agent.label}: ${agent.installHint}`).join('; ');
}

/** A relative program path (./my-agent) runs from the workspace folder, as the agent's cwd. */
export function resolveCustomArgv(argv: readonly string[], workspace: string | undefined): string[] {
  const [program, ...rest] = argv;
  if (program === undefined) return [];
  const relativePath = !path.isAbsolute(program) && /[\\/]/.test(program);
  return [relativePath && workspace ? path.resolve(workspace, program) : program, ...rest];
}

/**
 * The agent for `choice`. A named agent that is missing is an error naming how to install it,
 * never a silent fallback to the demo; only `auto` falls back, and says so.
 */
export function planEmbeddedAgent(
  choice: AgentChoice,
  customCommand: readonly string[],
  detection: AgentDetection,
  workspace: string | undefined,
): EmbeddedAgentPlan {
  switch (choice) {
    case 'demo':
      return { kind: 'demo', why: 'chosen' };
    case 'auto': {
      const installed = detection.known.find((agent) => agent.availability === 'installed');
      if (installed) return acpPlan(installed, 'installed');
      return { kind: 'demo', why: 'no_agent', notice: noAgentFoundNotice() };
    }
    case 'custom': {
      if (customCommand.length === 0) {
        return {
          kind: 'unavailable',
          message:
            'ultraplan.agent.choice is "custom" but ultraplan.agent.command is empty; set it to the agent\'s command as a list, e.g. ["my-agent", "--acp"].',
          settingKey: 'ultraplan.agent.command',
        };
      }
      const argv = resolveCustomArgv(customCommand, workspace);
      const detected = detection.custom(argv);
      if (detected.availability === 'missing') {
        return {
          kind: 'unavailable',
          message: `The custom agent command cannot run: ${detected.installHint ?? `${argv[0]} was not found`} (ultraplan.agent.command = ${JSON.stringify(customCommand)}).`,
          settingKey: 'ultraplan.agent.command',
        };
      }
      return { kind: 'acp', id: 'custom', argv, label: detected.label, availability: 'installed' };
    }
    default: {
      const detected = detection.known.find((agent) => agent.id === choice);
      if (!detected) {
        return { kind: 'unavailable', message: `Ultraplan does not know the agent "${choice}".`, settingKey: 'ultraplan.agent.choice' };
      }
      if (detected.availability === 'missing') return missingAgent(detected);
      return acpPlan(detected, detected.availability);
    }
  }
}

function acpPlan(agent: DetectedAgent, availability: 'installed' | 'npx'): EmbeddedAgentPlan {
  return { kind: 'acp', id: agent.id, argv: [...agent.argv], label: agent.label, availability };
}

/** The message for a known agent that is not installed (also used by "Choose Backend…"). */
export function missingAgent(agent: DetectedAgent): EmbeddedAgentPlan & { kind: 'unavailable' } {
  return {
    kind: 'unavailable',
    message: `${agent.label} is not installed here. Install it with: ${agent.installHint ?? 'its installer'}. Then try again, or choose another agent in "Ultraplan: Choose Backend…".`,
    settingKey: 'ultraplan.agent.choice',
  };
}

/** How "Choose Backend…" describes a detected agent. */
export function availabilityText(agent: DetectedAgent): string {
  switch (agent.availability) {
    case 'installed':
      return `installed${agent.path ? ` (${agent.path})` : ''}`;
    case 'npx': {
      // The pinned package npx will fetch: argv is ["npx", "-y", "<package>@<version>", …].
      const pkg = agent.argv.find((arg, index) => index > 0 && !arg.startsWith('-'));
      return `not installed; runs through npx (downloads ${pkg ?? 'the agent'} on first use)`;
    }
    case 'missing':
      return 'not found';
  }
}

/** Choose Backend's label for Claude Code on the web: longer than a local agent's, so typing "Claude" finds the local one first. */
export const cloudPickLabel = (label: string): string => `${label} (cloud)`;

/** One "Choose Backend…" entry for the embedded backend. */
export interface EmbeddedChoiceItem {
  label: string;
  description: string;
  detail: string;
  choice: AgentChoice;
  /** The detected agent behind a known-agent entry. */
  agent?: DetectedAgent;
  /** True for the entry matching the current settings. */
  current: boolean;
}

/**
 * The embedded entries of "Choose Backend…": auto, each known agent with whether it is
 * installed, a custom command, and the demo. `currentChoice` is marked when the embedded
 * backend is selected.
 */
export function embeddedChoiceItems(
  detection: AgentDetection,
  current: { backendIsEmbedded: boolean; choice: AgentChoice; customCommand: readonly string[] },
): EmbeddedChoiceItem[] {
  const isCurrent = (choice: AgentChoice) => current.backendIsEmbedded && current.choice === choice;
  const firstInstalled = detection.known.find((agent) => agent.availability === 'installed');
  const items: EmbeddedChoiceItem[] = [
    {
      label: 'Embedded · Automatic',
      description: firstInstalled ? `now: ${firstInstalled.label}` : 'now: Demo (scripted), no agent found',
      detail: `The first installed agent (${detection.known.map((agent) => agent.label.replace(/ \(ACP\)$/, '')).join(', ')}); the scripted demo when none is installed.`,
      choice: 'auto',
      current: isCurrent('auto'),
    },
  ];
  for (const agent of detection.known) {
    items.push({
      // The agent's name first: typing "Claude" in the quick pick (which ranks a match at the
      // label's start first, then the shorter label) finds the local agent before the cloud.
      label: `${agent.label} · Embedded`,
      description: availabilityText(agent),
      detail: `Runs: ${agent.argv.join(' ')}${agent.availability === 'missing' && agent.installHint ? ` · install: ${agent.installHint}` : ''}`,
      choice: agent.id,
      agent,
      current: isCurrent(agent.id),
    });
  }
  const custom = current.customCommand.length > 0 ? current.customCommand.join(' ') : '';
  items.push(
    {
      label: 'Embedded · Custom command…',
      description: custom ? `now: ${custom}` : 'any ACP agent',
      detail: 'An ACP agent started with your command line (no shell), in the workspace folder.',
      choice: 'custom',
      current: isCurrent('custom'),
    },
    {
      label: 'Embedded · Demo (scripted)',
      description: 'no agent',
      detail: 'Plays the shipped demo scenario: a scripted plan to try the review, labelled as a demo.',
      choice: 'demo',
      current: isCurrent('demo'),
    },
  );
  return items;
}

/** The command line shown for editing a stored argv (quoted where needed, so it splits back). */
export function joinCommandLine(argv: readonly string[]): string {
  return argv.map((arg) => (arg === '' || /[\s"'\\]/.test(arg) ? `'${arg.replace(/'/g, `'\\''`)}'` : arg)).join(' ');
}
