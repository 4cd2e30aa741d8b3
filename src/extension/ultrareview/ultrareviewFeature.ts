// The review in the editor, loaded by the first review command or at startup when threads are
// saved (ultrareviewEntry.ts): the threads, the controller, and the handlers of the commands Review
// Changes… (palette, inbox title bar, the `ultrareview` keyword), Cancel Review, and the thread
// actions Fix, Dismiss, Copy, Resolve and Reopen; Verify Against Plan, whose handler loads with its
// first use (verifyAgainstPlanCommand.ts).
import * as vscode from 'vscode';
import * as z from 'zod';
import { backendOf } from '../../core/backendKinds';
import { fixPrompt } from '../../core/review/prompts';
import { findingText } from '../../core/review/threadText';
import { ReviewScopeSchema, type ReviewScope } from '../../core/review/scope';
import { KNOWN_AGENT_IDS, findOnPath, splitCommandLine } from '../../agents/catalogue';
import { CLAUDE_BILLING_NOTICE } from '../../core/review/claudeReview';
import type { ReviewerSource } from '../../client/review/fleet';
import type { ReviewRequest } from '../../client/review/review';
import type { ExtensionServices } from '../commands/services';
import { REVIEW_CHANGES_COMMAND, SHOW_FINDINGS_COMMAND, VERIFY_AGAINST_PLAN_COMMAND } from './commandIds';
import { ReviewController, pickScope, type ReviewSummary } from './reviewController';
import { ReviewThreads } from './reviewThreads';

export { reviewInboxItem } from './reviewInboxItem';
import type { PersistedThread } from '../../core/review/persisted';
import type { ReviewFinding } from '../../core/review/merge';
import type { PanelVerifications } from '../review/panelVerifications';

/** Who verifies on the embedded backend: the agent you plan with, or another kind of agent. */
const VERIFIER_AGENTS = ['same', ...KNOWN_AGENT_IDS] as const;

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

/** Verify Against Plan's second argument (the panel's Continue on a step); anything else: a plain verification. */
const VerifyOptionsSchema = z
  .object({ continueStep: z.string().min(1).max(500).optional(), auto: z.boolean().optional() })
  .optional()
  .catch(undefined)
  .transform((o) => o ?? {});

export type ReviewCommandHandlers = Record<string, (...args: unknown[]) => unknown>;

/** Builds the review's parts; `onSummary` hears every change of what the inbox shows. */
export function activateUltrareview(
  services: ExtensionServices,
  onSummary: (summary: ReviewSummary | undefined) => void,
  verifications: PanelVerifications,
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

  /** The agents that review; `say` tells why there are none (a notification, or the log for a verification nobody asked for). */
  async function fleetAgents(
    say: (text: string) => unknown = (text) => vscode.window.showWarningMessage(text),
  ): Promise<Fleet | undefined> {
    const s = settings.readForBackend();
    if (!s) return undefined;
    const noFleet = backendOf(s.backend).noReviewFleet;
    if (noFleet) {
      void say(`Ultraplan: ${noFleet}`);
      return undefined;
    }
    const chosen = await backends.forNewSession(s);
    if (chosen.demo) {
      void say(
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
      void say(
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

  register(VERIFY_AGAINST_PLAN_COMMAND, async (arg?: unknown, options?: unknown) => {
    const { verifyAgainstPlanCommand } = await import('./verifyAgainstPlanCommand');
    const verifyOptions = VerifyOptionsSchema.parse(options);
    const fleet = async () => {
      const agents = await fleetAgents(
        verifyOptions.auto ? (text) => log.info(`verification after the execution ended, not started: ${text}`) : undefined,
      );
      return agents && { ...agents, finders: reviewSettings().finders };
    };
    const showThreads = (root: string, headline: string, findings: readonly ReviewFinding[]) => threads.show(root, headline, findings);
    await verifyAgainstPlanCommand(services, fleet, typeof arg === 'string' ? arg : undefined, verifications, showThreads, verifyOptions);
  });

  register('ultraplan.cancelReview', () => controller.cancel());
  register(SHOW_FINDINGS_COMMAND, () => controller.showFindings());

  const findingOf = (arg: unknown): PersistedThread | undefined => {
    const finding = threads.findingOf(arg);
    if (!finding) void vscode.window.showWarningMessage('Ultraplan: that finding is no longer shown.');
    return finding;
  };

  register('ultraplan.review.fix', async (arg?: unknown) => {
    const finding = findingOf(arg);
    if (finding?.plan) {
      // A verification's claim: Fix asks the session that executed the plan (Continue), not a new one.
      const { fixPlanClaim } = await import('./verifyAgainstPlanCommand');
      await fixPlanClaim(services, finding);
      return;
    }
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
