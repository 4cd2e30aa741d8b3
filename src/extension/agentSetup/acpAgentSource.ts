// The embedded backend's agent: an ACP agent (Claude's adapter, Gemini CLI, Codex's adapter or a
// custom command) planning in the workspace folder, or the scripted demo when chosen or when
// nothing is installed. Chosen per new session, so a change in "Choose Backend…" applies at once.
import * as vscode from 'vscode';
import {
  KNOWN_AGENTS,
  claudeBypassProblem,
  currentProcessIdentity,
  detectCustomAgent,
  detectKnownAgents,
  type ProcessIdentity,
} from '../../agents/catalogue';
import { noAgentInstallHints, planEmbeddedAgent, type AgentDetection, type EmbeddedAgentPlan } from './agentChoice';
import type { EmbeddedAgent, EmbeddedAgentSource } from '../backends/embeddedAgent';
import type { UltraplanSettings } from '../settings/settingsSchema';

const OPEN_SETTINGS = 'Open Settings';
const CHOOSE_BACKEND = 'Choose Backend…';

/** PATH lookups only: cheap enough to run for each new session and each "Choose Backend…". */
export function detectAgents(env: NodeJS.ProcessEnv = process.env): AgentDetection {
  return { known: detectKnownAgents(env), custom: (argv) => detectCustomAgent(argv, env) };
}

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** What the embedded backend would run now, with the settings' agent choice. */
export function planForSettings(
  settings: UltraplanSettings,
  detection: AgentDetection = detectAgents(),
  identity: ProcessIdentity = currentProcessIdentity(),
): EmbeddedAgentPlan {
  const plan = planEmbeddedAgent(settings['agent.choice'], settings['agent.command'], detection, workspaceFolder());
  if (plan.kind === 'acp' && !workspaceFolder()) {
    return {
      kind: 'unavailable',
      message: `${plan.label} plans in a workspace folder; open a folder first (or choose the demo in "Ultraplan: Choose Backend…").`,
      settingKey: 'ultraplan.agent.choice',
    };
  }
  const bypass = plan.kind === 'acp' && plan.id === 'claude' ? claudeBypassProblem(settings.afterApproval, identity) : undefined;
  if (bypass) return { kind: 'unavailable', message: bypass, settingKey: 'ultraplan.afterApproval' };
  return plan;
}

/** For the "Plan a Task" prompt: which agent will plan. */
export function embeddedAgentDescription(settings: UltraplanSettings): string {
  const plan = planForSettings(settings);
  switch (plan.kind) {
    case 'acp':
      return plan.label;
    case 'demo':
      return plan.why === 'chosen' ? 'Demo (scripted)' : 'Demo (scripted): no agent found';
    case 'unavailable':
      return 'no usable agent';
  }
}

/**
 * Before a session starts: false (and a message with the way to fix it) when the chosen agent
 * cannot run, so the person is not sent through a failing start.
 */
export function checkEmbeddedAgent(settings: UltraplanSettings, log: vscode.LogOutputChannel): boolean {
  if (settings.backend !== 'embedded') return true;
  const plan = planForSettings(settings);
  if (plan.kind !== 'unavailable') return true;
  log.warn(`embedded agent: ${plan.message}`);
  const missing = KNOWN_AGENTS.find((agent) => agent.id === settings['agent.choice']);
  if (missing && plan.settingKey === 'ultraplan.agent.choice') {
    // A known agent that is not installed: offer its install (with the command shown) rather than only the error.
    // The install UI is a chunk of its own: most windows never need it.
    void import('./agentInstallUi')
      .then(({ offerAgentInstall }) => offerAgentInstall(missing, log))
      .then((installed) => {
        if (installed)
          void vscode.window.showInformationMessage(`Ultraplan: ${missing.label} is installed. Run "Ultraplan: Plan a Task…" again.`);
      });
    return false;
  }
  showAgentProblem(plan.message, plan.settingKey);
  return false;
}

export function showAgentProblem(message: string, settingKey: string): void {
  void vscode.window.showErrorMessage(`Ultraplan: ${message}`, CHOOSE_BACKEND, OPEN_SETTINGS).then((choice) => {
    if (choice === OPEN_SETTINGS) void vscode.commands.executeCommand('workbench.action.openSettings', settingKey);
    if (choice === CHOOSE_BACKEND) void vscode.commands.executeCommand('ultraplan.chooseBackend');
  });
}

export interface AcpAgentSourceOptions {
  log: vscode.LogOutputChannel;
  /** The scripted demo (and configured scenarios), for `demo` and for `auto` with nothing found. */
  demo: EmbeddedAgentSource;
  detect?: () => AgentDetection;
}

export function acpAgentSource(options: AcpAgentSourceOptions): EmbeddedAgentSource {
  const { log } = options;
  return async (settings): Promise<EmbeddedAgent> => {
    const plan = planForSettings(settings, (options.detect ?? detectAgents)());
    switch (plan.kind) {
      case 'unavailable':
        throw new Error(plan.message);
      case 'demo': {
        const demo = await options.demo(settings);
        if (!plan.notice) return demo;
        log.warn(`embedded agent: ${plan.notice} Install commands: ${noAgentInstallHints()}`);
        return { ...demo, notice: plan.notice };
      }
      case 'acp': {
        const cwd = workspaceFolder() as string; // planForSettings refused an ACP agent without a folder
        log.info(
          `embedded agent: ${plan.label} (${plan.availability}): ${plan.argv.join(' ')} in ${cwd}; after approval: ${settings.afterApproval}`,
        );
        const viaNpx = plan.availability === 'npx' ? KNOWN_AGENTS.find((agent) => agent.id === plan.id) : undefined;
        if (viaNpx) await (await import('./agentInstallUi')).fetchForNpx(viaNpx, log);
        const launch = {
          kind: 'acp' as const,
          argv: [...plan.argv],
          cwd,
          label: plan.label,
          afterApproval: settings.afterApproval,
          firstEventTimeoutMs: settings['agent.firstEventTimeoutSeconds'] * 1000,
          outsideAccess: settings['agent.outsideAccess'],
        };
        return { launch, label: plan.label, demo: false };
      }
    }
  };
}
