// Ultraplan: Review Plan File…: a plan written by any tool (a file from the explorer's context
// menu, the inbox's "Plans on disk", or a pick of those plus Browse…) becomes a session on the
// current backend that starts from that plan, waiting for the person's decision in the review
// panel (core/planFileSession.ts): Approve starts an agent that carries it out, Reject with
// comments one that revises it. A chunk of its own, loaded by the command's first run.
import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../../core/errors';
import { planOfFile } from '../../core/planFile';
import { planTitle } from '../../core/planDiscovery';
import { MAX_PLAN_FILE_CHARS, planFileOf, planFilePrompt, planFileSessionRequest } from '../../core/planFileSession';
import { BACKENDS } from '../../core/backendKinds';
import { checkEmbeddedAgent, embeddedAgentDescription } from '../agentSetup/acpAgentSource';
import type { UltraplanSettings } from '../settings/settingsSchema';
import type { ExtensionServices } from '../commands/services';
import type { FollowedSession } from '../sessions/followedSession';
import { foundPlanLabel, type PlansOnDisk } from './plansOnDisk';

/** UTF-8 takes at most 4 bytes a character: a file larger than this cannot hold a plan we take. */
const MAX_PLAN_FILE_BYTES = MAX_PLAN_FILE_CHARS * 4;

/** A plan file read for review, or why it cannot be. */
export type ReadPlanFile = { ok: true; plan: string; source: string; title: string } | { ok: false; reason: string };

/** The file's plan as the review shows it: front matter (Cursor's, ours) removed, the rest unchanged. */
export async function readPlanFile(uri: vscode.Uri): Promise<ReadPlanFile> {
  const source = shownSource(uri);
  let bytes: Uint8Array;
  try {
    const stat = await vscode.workspace.fs.stat(uri);
    if (stat.type !== vscode.FileType.File) return { ok: false, reason: `${source} is not a file` };
    if (stat.size > MAX_PLAN_FILE_BYTES) {
      return { ok: false, reason: `${source} holds ${stat.size} bytes; a plan to review holds at most ${MAX_PLAN_FILE_CHARS} characters` };
    }
    bytes = await vscode.workspace.fs.readFile(uri);
  } catch (err) {
    return { ok: false, reason: `${source} cannot be read: ${errorMessage(err)}` };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, reason: `${source} is not UTF-8 text` };
  }
  const plan = planOfFile(text);
  if (plan.trim() === '') return { ok: false, reason: `${source} holds no plan (it is empty once its front matter is removed)` };
  if (plan.length > MAX_PLAN_FILE_CHARS) {
    return { ok: false, reason: `${source} holds ${plan.length} characters; a plan to review holds at most ${MAX_PLAN_FILE_CHARS}` };
  }
  return { ok: true, plan, source, title: planTitle(plan, path.basename(uri.path)) };
}

/** Where the plan was read, for people and for the agent: workspace-relative, or under "~", or the full path. */
function shownSource(uri: vscode.Uri): string {
  if (uri.scheme !== 'file') return uri.toString(true);
  const relative = vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
  if (relative !== uri.fsPath) return relative;
  const home = os.homedir();
  const rest = path.relative(home, uri.fsPath);
  return rest && !rest.startsWith('..') && !path.isAbsolute(rest) ? `~/${rest.split(path.sep).join('/')}` : uri.fsPath;
}

/** The plan to review: the one given (explorer, inbox), else a pick of the plans found, or Browse…. */
async function planUri(arg: unknown, plans: PlansOnDisk): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  await plans.refresh();
  const browse: vscode.QuickPickItem = { label: '$(folder-opened) Browse…', description: 'a Markdown file anywhere' };
  const found = plans.found.map((plan) => ({ ...foundPlanLabel(plan), uri: vscode.Uri.parse(plan.location) }));
  const picked = await vscode.window.showQuickPick<vscode.QuickPickItem & { uri?: vscode.Uri }>(
    [...found, ...(found.length > 0 ? [{ label: '', kind: vscode.QuickPickItemKind.Separator }] : []), browse],
    {
      title: 'Ultraplan: Review Plan File',
      placeHolder:
        found.length > 0
          ? 'A plan found on disk (newest first), or Browse…'
          : 'No plans found in .copilot/plans, .cursor/plans, .air/plans, the plans folder or ~/.claude/plans: Browse…',
      matchOnDescription: true,
    },
  );
  if (!picked) return undefined;
  if (picked.uri) return picked.uri;
  const chosen = await vscode.window.showOpenDialog({
    title: 'Ultraplan: Review Plan File',
    openLabel: 'Review Plan',
    canSelectMany: false,
    filters: { Markdown: ['md', 'markdown'] },
    ...(vscode.workspace.workspaceFolders?.[0] ? { defaultUri: vscode.workspace.workspaceFolders[0].uri } : {}),
  });
  return chosen?.[0];
}

/**
 * Where the plan's session runs, and so which agent carries it out: the current backend, unless
 * another one that can hold a plan file is configured too (then the person picks, current first).
 * Claude Code on the web and Jules plan only what their own agent proposes (their APIs take no
 * plan to review), so they are never offered.
 */
async function pickBackend(current: UltraplanSettings): Promise<UltraplanSettings | undefined> {
  const web = current.backend === 'claude-web' || current.backend === 'jules';
  const choices: UltraplanSettings[] = web ? [] : [current];
  if (current.backend !== 'embedded') choices.push({ ...current, backend: 'embedded' });
  if (current.backend !== 'server' && current['server.url']) choices.push({ ...current, backend: 'server' });
  if (!web && choices.length === 1) return current;
  const items = choices.map((choice) => ({
    label: BACKENDS[choice.backend].label,
    description: `${choice === current ? 'current · ' : ''}${BACKENDS[choice.backend].where({
      agent: choice.backend === 'embedded' ? embeddedAgentDescription(choice) : undefined,
      serverUrl: choice['server.url'],
    })}`,
    choice,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Ultraplan: Review Plan File',
    placeHolder: web
      ? `${BACKENDS[current.backend].label} plans only what its own agent proposes: review this plan on…`
      : 'Review the plan on… (its agent carries it out once approved)',
  });
  return picked?.choice;
}

export async function reviewPlanFile(services: ExtensionServices, plans: PlansOnDisk, arg: unknown): Promise<FollowedSession | undefined> {
  const { sessions, settings, log } = services;
  await sessions.restored;
  const uri = await planUri(arg, plans);
  if (!uri) return undefined;
  const read = await readPlanFile(uri);
  if (!read.ok) {
    void vscode.window.showErrorMessage(`Ultraplan: ${read.reason}.`);
    return undefined;
  }
  const current = settings.readForBackend();
  if (!current) return undefined;
  const s = await pickBackend(current);
  if (!s) return undefined;
  if (s.backend === 'embedded' && !vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      'Ultraplan: the embedded backend runs an agent on this machine, which an untrusted workspace does not allow. Trust the workspace, or choose a server backend.',
    );
    return undefined;
  }
  if (!checkEmbeddedAgent(s, log)) return undefined;
  log.info(`reviewing the plan in ${read.source} (${read.plan.length} chars)`);
  const planFile = planFileOf(read.plan, read.source);
  return sessions.start(planFilePrompt(read.source), s, {
    title: read.title,
    request: (title) => planFileSessionRequest(planFile, title, randomUUID),
  });
}
