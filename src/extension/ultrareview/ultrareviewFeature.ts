// The review in the editor, loaded by the first review command or at startup when threads are
// saved (ultrareviewEntry.ts): the threads, the controller, and the handlers of the commands Review
// Changes… (palette, inbox title bar, the `ultrareview` keyword), Cancel Review, and the thread
// actions Fix, Dismiss, Copy, Resolve and Reopen.
import * as vscode from 'vscode';
import * as z from 'zod';
import { fixPrompt } from '../../core/review/prompts';
import { findingText } from '../../core/review/threadText';
import { ReviewScopeSchema, type ReviewScope } from '../../core/review/scope';
import { findOnPath, splitCommandLine } from '../../sessions/acp';
import { CLAUDE_BILLING_NOTICE } from '../../core/review/claudeReview';
import type { ReviewerSource } from '../../sessions/review/fleet';
import type { ReviewRequest } from '../../sessions/review/review';
import type { ExtensionServices } from '../commands/services';
import { REVIEW_CHANGES_COMMAND } from './commandIds';
import { ReviewController, pickScope, type ReviewSummary } from './reviewController';
import { ReviewThreads } from './reviewThreads';

export { reviewInboxItem } from './reviewInboxItem';
import type { PersistedThread } from '../../core/review/persisted';

/** Who verifies on the embedded backend: the agent you plan with, or another kind of agent. */
const VERIFIER_AGENTS = ['same', 'claude', 'gemini', 'codex'] as const;

const ReviewSettingsSchema = z.object({
  finders: z.number().int().min(1).max(10).catch(3),
  claudeCommand: z.string().min(1).catch('claude'),
  verifierAgent: z.enum(VERIFIER_AGENTS).catch('same'),
});

/** What a caller (a test, the keyword) may pass to skip the picks. */
const ReviewArgsSchema = z
  .object({ scope: ReviewScopeSchema.optional(), reviewers: z.enum(['agents', 'claude', 'both']).optional() })
  .optional()
  .catch(undefined);

type Reviewers = 'agents' | 'claude' | 'both';

export type ReviewCommandHandlers = Record<string, (...args: unknown[]) => unknown>;

/** Builds the review's parts; `onSummary` hears every change of what the inbox shows. */
export function activateUltrareview(
  services: ExtensionServices,
  onSummary: (summary: ReviewSummary | undefined) => void,
): ReviewCommandHandlers {
  const { context, log, settings, backends } = services;
  const threads = new ReviewThreads(context.workspaceState, log);
  const controller = new ReviewController(threads, log);
  context.subscriptions.push(
    threads,
    controller,
    controller.onDidChange(() => onSummary(controller.summary)),
  );
  onSummary(controller.summary);
  const handlers: ReviewCommandHandlers = {};
  const register = (id: string, run: (...args: unknown[]) => unknown) => {
    handlers[id] = run;
  };

  const reviewSettings = () => ReviewSettingsSchema.parse({ ...vscode.workspace.getConfiguration('ultraplan.review') });

  type Fleet = Pick<NonNullable<ReviewRequest['fleet']>, 'sources' | 'verifiers'>;

  async function fleetAgents(): Promise<Fleet | undefined> {
    const s = settings.readForBackend();
    if (!s) return undefined;
    if (s.backend === 'claude-web') {
      void vscode.window.showWarningMessage(
        "Ultraplan: a review's agents run on the embedded backend or a session server; Claude Code on the web is not one. Use Claude Code's own review, or choose another backend.",
      );
      return undefined;
    }
    const chosen = await backends.forNewSession(s);
    if (chosen.demo) {
      void vscode.window.showWarningMessage(
        `Ultraplan: the review needs an ACP agent, and the embedded backend runs the scripted demo (${chosen.agentLabel ?? 'demo'}). Choose an agent first.`,
      );
      return undefined;
    }
    const sources: ReviewerSource[] = [{ label: chosen.agentLabel ?? chosen.backend.label, backend: chosen.backend }];
    const { verifierAgent } = reviewSettings();
    if (verifierAgent === 'same') return { sources };
    if (s.backend !== 'embedded') {
      log.info(`ultraplan.review.verifierAgent (${verifierAgent}) applies to the embedded backend; the server's agent verifies`);
      return { sources };
    }
    const verifier = await backends.forNewSession({ ...s, 'agent.choice': verifierAgent });
    if (verifier.demo) {
      void vscode.window.showWarningMessage(
        `Ultraplan: ultraplan.review.verifierAgent is ${verifierAgent}, and that agent was not found here. Install it, or set the verifier to "same".`,
      );
      return undefined;
    }
    return { sources, verifiers: [{ label: verifier.agentLabel ?? verifier.backend.label, backend: verifier.backend }] };
  }

  async function pickReviewers(claudeFound: boolean): Promise<Reviewers | undefined> {
    if (!claudeFound) return 'agents';
    const items: Array<vscode.QuickPickItem & { value: Reviewers }> = [
      { label: 'Agents', description: `${reviewSettings().finders} finders, each finding verified by another run`, value: 'agents' },
      { label: "Claude Code's review", description: 'claude ultrareview, billed as extra usage after the free runs', value: 'claude' },
      { label: 'Both', value: 'both' },
    ];
    return (await vscode.window.showQuickPick(items, { title: 'Ultraplan: Review Changes', placeHolder: 'Who reviews?' }))?.value;
  }

  register(REVIEW_CHANGES_COMMAND, async (arg?: unknown) => {
    const given = ReviewArgsSchema.parse(arg);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) {
      void vscode.window.showWarningMessage('Ultraplan: open a folder with a git repository to review its changes.');
      return;
    }
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage(
        'Ultraplan: a review runs git and agents on this machine, which an untrusted workspace does not allow.',
      );
      return;
    }
    const scope: ReviewScope | undefined = given?.scope ?? (await pickScope());
    if (!scope) return;
    const { finders, claudeCommand } = reviewSettings();
    const claudeArgv = splitCommandLine(claudeCommand);
    const reviewers = given?.reviewers ?? (await pickReviewers(findOnPath(claudeArgv[0] ?? 'claude') !== undefined));
    if (!reviewers) return;
    const request: Omit<ReviewRequest, 'signal' | 'onProgress'> = { folder, scope };
    if (reviewers !== 'claude') {
      const agents = await fleetAgents();
      if (!agents) return;
      request.fleet = { ...agents, finders };
    }
    if (reviewers !== 'agents') {
      const start = 'Start Review';
      const answer = await vscode.window.showWarningMessage(CLAUDE_BILLING_NOTICE, { modal: true }, start);
      if (answer !== start) return;
      request.claude = {
        command: claudeArgv,
        trusted: vscode.workspace.isTrusted,
        onLine: (line) => log.info(`claude ultrareview: ${line}`),
      };
    }
    await controller.run(request);
  });

  register('ultraplan.cancelReview', () => controller.cancel());

  const findingOf = (arg: unknown): PersistedThread | undefined => {
    const finding = threads.findingOf(arg);
    if (!finding) void vscode.window.showWarningMessage('Ultraplan: that finding is no longer shown.');
    return finding;
  };

  register('ultraplan.review.fix', async (arg?: unknown) => {
    const finding = findingOf(arg);
    const s = finding && settings.readForBackend();
    if (!finding || !s) return;
    await services.launch(fixPrompt(finding), s);
  });
  register('ultraplan.review.dismiss', async (arg?: unknown) => {
    const finding = findingOf(arg);
    if (!finding) return;
    const reason = await vscode.window.showInputBox({
      title: `Dismiss "${finding.title}"`,
      prompt: 'Why? The next review of the same code will not raise it again.',
      placeHolder: 'e.g. intended: the list is never empty here',
      validateInput: (value) => (value.trim() ? undefined : 'Give a reason, so the dismissal can be understood later.'),
    });
    if (!reason?.trim()) return;
    await threads.dismiss(finding.id, reason.trim());
  });
  register('ultraplan.review.copy', async (arg?: unknown) => {
    const finding = findingOf(arg);
    if (finding) await vscode.env.clipboard.writeText(findingText(finding));
  });
  register('ultraplan.review.resolve', async (arg?: unknown) => {
    const finding = findingOf(arg);
    if (finding) await threads.setState(finding.id, 'resolved');
  });
  register('ultraplan.review.reopen', async (arg?: unknown) => {
    const finding = findingOf(arg);
    if (finding) await threads.setState(finding.id, 'unresolved');
  });
  return handlers;
}
