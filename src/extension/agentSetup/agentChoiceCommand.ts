// The embedded entries of "Ultraplan: Choose Backend…" and what picking one does: a known agent
// (installed, through npx, or explained how to install when missing), a custom command typed as
// a command line and stored as argv, automatic choice, or the scripted demo.
import * as vscode from 'vscode';
import { KNOWN_AGENTS, splitCommandLine } from '../../agents/catalogue';
import type { DetectedAgent } from '../../agents/catalogue';
import { nodeVersion, offerAgentInstall } from './agentInstallUi';
import { detectAgents } from './acpAgentSource';
import { embeddedChoiceItems, joinCommandLine, missingAgent, type AgentChoice, type AgentDetection } from './agentChoice';
import { writeSetting } from '../settings/settings';
import type { UltraplanSettings } from '../settings/settingsSchema';
import { errorMessage } from '../../core/errors';

export type EmbeddedPickItem = vscode.QuickPickItem & { backend: 'embedded'; choice: AgentChoice; agent?: DetectedAgent };

export function embeddedPickItems(current: UltraplanSettings, detection: AgentDetection = detectAgents()): EmbeddedPickItem[] {
  return embeddedChoiceItems(detection, {
    backendIsEmbedded: current.backend === 'embedded',
    choice: current['agent.choice'],
    customCommand: current['agent.command'],
  }).map((item) => {
    const pick: EmbeddedPickItem = {
      label: `${item.current ? '$(check) ' : ''}${item.label}`,
      description: item.description,
      detail: item.detail,
      backend: 'embedded',
      choice: item.choice,
    };
    if (item.agent) pick.agent = item.agent;
    return pick;
  });
}

/** Validates a typed command line for the input box (an error blocks, a warning does not). */
export function commandLineProblem(text: string, detection: AgentDetection): vscode.InputBoxValidationMessage | undefined {
  let argv: string[];
  try {
    argv = splitCommandLine(text);
  } catch (err) {
    return { message: errorMessage(err), severity: vscode.InputBoxValidationSeverity.Error };
  }
  if (argv.length === 0)
    return { message: 'Type the command that starts the ACP agent.', severity: vscode.InputBoxValidationSeverity.Error };
  const detected = detection.custom(argv);
  if (detected.availability === 'missing') {
    return {
      message: `${detected.installHint ?? `${argv[0]} was not found`}; saved anyway if you press Enter.`,
      severity: vscode.InputBoxValidationSeverity.Warning,
    };
  }
  return { message: `Runs: ${JSON.stringify(argv)} (no shell)`, severity: vscode.InputBoxValidationSeverity.Info };
}

/** Applies a picked embedded entry to the settings; returns false when nothing was changed. */
export async function applyEmbeddedChoice(
  chosen: EmbeddedPickItem,
  current: UltraplanSettings,
  log: vscode.LogOutputChannel,
  detection: AgentDetection = detectAgents(),
): Promise<boolean> {
  const config = vscode.workspace.getConfiguration('ultraplan');
  let picked = chosen;
  if (picked.agent && picked.agent.availability === 'missing') {
    log.info(`choose backend: ${missingAgent(picked.agent).message}`);
    const known = KNOWN_AGENTS.find((agent) => agent.id === picked.agent?.id);
    if (!known || !(await offerAgentInstall(known, log))) return false;
    // Installed now: run it as installed.
    const found = detectAgents().known.find((agent) => agent.id === known.id);
    picked = { ...picked, agent: found && found.availability !== 'missing' ? found : { ...picked.agent, availability: 'installed' } };
  }
  let label = picked.agent?.label ?? (picked.choice === 'demo' ? 'the scripted demo' : 'the first installed agent');
  if (picked.choice === 'custom') {
    const typed = await vscode.window.showInputBox({
      title: 'Ultraplan: custom ACP agent command',
      prompt:
        'The command line that starts an ACP agent over stdio; run without a shell, in the workspace folder. Quote arguments with spaces.',
      placeHolder: 'e.g. my-agent --acp',
      value: joinCommandLine(current['agent.command']),
      ignoreFocusOut: true,
      validateInput: (text) => commandLineProblem(text, detection),
    });
    if (typed === undefined) return false;
    const argv = splitCommandLine(typed);
    if (argv.length === 0) return false;
    await writeSetting('agent.command', argv);
    label = detection.custom(argv).label;
  }
  await writeSetting('agent.choice', picked.choice);
  await writeSetting('backend', 'embedded');
  log.info(
    `backend: embedded, agent ${picked.choice}${picked.choice === 'custom' ? ` ${JSON.stringify(config.get('agent.command'))}` : ''}`,
  );
  const known = KNOWN_AGENTS.find((agent) => agent.id === picked.agent?.id);
  if (known) {
    // The catalogue's `node` is what the agent's package declares: said now, not at its first session.
    const { nodeProblem } = await import('../../agents/catalogue/agentInstall');
    const problem = nodeProblem(known, await nodeVersion());
    if (problem) {
      log.info(`choose backend: ${problem}`);
      void vscode.window.showWarningMessage(`Ultraplan: ${problem}`);
    }
  }
  const viaNpx = picked.agent?.availability === 'npx' ? ' (through npx: the first session downloads it)' : '';
  void vscode.window.showInformationMessage(`Ultraplan: new sessions plan in the editor with ${label}${viaNpx}.`);
  return true;
}
