// `--agent KIND:ARGUMENT` for the server CLI. Each kind of agent plugs in as one entry of
// AGENT_KINDS (scripted:FILE here; acp:<command…> is added by the ACP work), so the CLI, its
// help text and its errors never need to know the kinds one by one.
import * as path from 'node:path';
import type { AgentFactory } from './agent';
import { loadScenarioFile } from './catalogue/scenario';
import { scriptedAgentFactory } from './scripted/scriptedAgent';
import { AFTER_APPROVAL_VALUES, OUTSIDE_ACCESS_VALUES, type AfterApproval, type OutsideAccess } from '../core/agentSettings';
import { createAcpAgentFactory } from './acp/acpAgentFactory';
import { resolveAgentCommand } from './catalogue';
import type { AgentSandboxSettings } from './sandbox/agentSandbox';

export interface AgentKindContext {
  log: (line: string) => void;
  /** The folder an agent works in (`--workspace`), when the CLI was given one. */
  workspace?: string;
  /** Files an agent is never given to read (the server's token file). */
  secretFiles?: readonly string[];
  /** Runs each ACP agent in a sandbox of its own (the service's `--sandbox`). */
  sandbox?: AgentSandboxSettings;
}

export interface AgentKind {
  /** For --help: "scripted:FILE". */
  readonly usage: string;
  readonly description: string;
  /** Builds the factory; throws an Error whose message says what is wrong with `argument`. */
  create(argument: string, context: AgentKindContext): Promise<{ factory: AgentFactory; label: string }>;
}

export const AGENT_KINDS: Record<string, AgentKind> = {
  scripted: {
    usage: 'scripted:FILE',
    description: 'a scripted agent driven by a scenario JSON file (see examples/)',
    async create(argument) {
      if (!argument) throw new Error('scripted needs a scenario file: --agent scripted:examples/demo.json');
      const scenario = await loadScenarioFile(argument);
      const label = `Scripted ${scenario.title ? `"${scenario.title}" ` : ''}(${path.basename(argument)})`;
      return { factory: scriptedAgentFactory(scenario, label), label };
    },
  },
  acp: {
    usage: 'acp:COMMAND…',
    description:
      'an ACP agent in plan mode: claude, gemini, codex, or a command line ("acp:npx -y @agentclientprotocol/claude-agent-acp"); ' +
      'it works in --workspace (default: the current directory). Env: ULTRAPLAN_AFTER_APPROVAL (default|acceptEdits), ' +
      'ULTRAPLAN_ACP_FIRST_EVENT_TIMEOUT_MS, ULTRAPLAN_OUTSIDE_ACCESS (ask|allow|deny: reads outside the workspace and fetches while planning)',
    async create(argument, context) {
      const { argv, label } = resolveAgentCommand(argument);
      const afterApproval = process.env.ULTRAPLAN_AFTER_APPROVAL ?? 'default';
      if (!(AFTER_APPROVAL_VALUES as readonly string[]).includes(afterApproval)) {
        throw new Error(
          `ULTRAPLAN_AFTER_APPROVAL must be one of ${AFTER_APPROVAL_VALUES.join(', ')}, got ${JSON.stringify(afterApproval)}`,
        );
      }
      const outsideAccess = process.env.ULTRAPLAN_OUTSIDE_ACCESS ?? 'ask';
      if (!(OUTSIDE_ACCESS_VALUES as readonly string[]).includes(outsideAccess)) {
        throw new Error(
          `ULTRAPLAN_OUTSIDE_ACCESS must be one of ${OUTSIDE_ACCESS_VALUES.join(', ')}, got ${JSON.stringify(outsideAccess)}`,
        );
      }
      const timeoutText = process.env.ULTRAPLAN_ACP_FIRST_EVENT_TIMEOUT_MS;
      if (timeoutText !== undefined && !/^\d+$/.test(timeoutText)) {
        throw new Error(`ULTRAPLAN_ACP_FIRST_EVENT_TIMEOUT_MS must be a number of milliseconds, got ${JSON.stringify(timeoutText)}`);
      }
      const cwd = path.resolve(context.workspace ?? process.cwd());
      context.log(`acp: ${argv.join(' ')} in ${cwd}`);
      const factory = await createAcpAgentFactory({
        argv,
        cwd,
        label,
        afterApproval: afterApproval as AfterApproval,
        outsideAccess: outsideAccess as OutsideAccess,
        ...(timeoutText !== undefined ? { firstEventTimeoutMs: Number(timeoutText) } : {}),
        log: context.log,
        ...(context.secretFiles ? { secretFiles: context.secretFiles } : {}),
        ...(context.sandbox ? { sandbox: context.sandbox } : {}),
      });
      return { factory, label };
    },
  },
};

export interface AgentSpec {
  kind: string;
  argument: string;
}

/** Splits `KIND:ARGUMENT` (the argument may itself hold colons) and checks the kind exists. */
export function parseAgentSpec(spec: string): AgentSpec {
  const colon = spec.indexOf(':');
  const kind = (colon < 0 ? spec : spec.slice(0, colon)).trim();
  const argument = colon < 0 ? '' : spec.slice(colon + 1);
  if (!Object.hasOwn(AGENT_KINDS, kind)) {
    const known = Object.values(AGENT_KINDS)
      .map((k) => k.usage)
      .join(', ');
    throw new Error(`unknown agent ${JSON.stringify(spec)}; expected one of: ${known}`);
  }
  return { kind, argument };
}

export async function createAgentFactory(spec: string, context: AgentKindContext): Promise<{ factory: AgentFactory; label: string }> {
  const { kind, argument } = parseAgentSpec(spec);
  return (AGENT_KINDS[kind] as AgentKind).create(argument, context);
}
