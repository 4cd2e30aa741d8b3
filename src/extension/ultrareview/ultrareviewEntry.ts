// The review's light side, registered at activation: its commands, and what the Plan Inbox shows of
// it. The rest (ultrareviewFeature.ts: threads, the controller, the picks) is imported by the first
// review command, or at once when this workspace has review threads to bring back after a reload.
import * as vscode from 'vscode';
import { REVIEW_THREADS_KEY } from '../../core/stateKeys';
import { registerCommand, type ExtensionServices } from '../commands/services';
import { REVIEW_CHANGES_COMMAND, SHOW_FINDINGS_COMMAND, VERIFY_AGAINST_PLAN_COMMAND } from './commandIds';
import type { ReviewSummary } from './reviewController';
import { ReviewPanel } from '../review/reviewPanel';
import type { PanelVerifications } from '../review/panelVerifications';
import type { ReviewCommandHandlers } from './ultrareviewFeature';
import { errorMessage } from '../../core/errors';

export const REVIEW_COMMANDS = [
  REVIEW_CHANGES_COMMAND,
  'ultraplan.cancelReview',
  SHOW_FINDINGS_COMMAND,
  'ultraplan.review.fix',
  'ultraplan.review.dismiss',
  'ultraplan.review.copy',
  'ultraplan.review.resolve',
  'ultraplan.review.reopen',
  VERIFY_AGAINST_PLAN_COMMAND,
] as const;

/**
 * Verify Against Plan is about the session its caller names (a key, or the inbox row it was run
 * on), else the panel's (read here, where the panel is loaded already).
 */
function argsFor(id: string, args: unknown[]): unknown[] {
  if (id !== VERIFY_AGAINST_PLAN_COMMAND || typeof args[0] === 'string') return args;
  const row = args[0];
  const rowKey = row && typeof row === 'object' && 'key' in row && typeof row.key === 'string' ? row.key : undefined;
  return [rowKey ?? ReviewPanel.current?.sessionKey, ...args.slice(1)];
}

/** What the inbox reads: the review's row (none before a review), and when it changes. */
export interface ReviewRows {
  item(): vscode.TreeItem | undefined;
  readonly onDidChange: vscode.Event<void>;
}

export function registerUltrareview(services: ExtensionServices): ReviewRows {
  const changed = new vscode.EventEmitter<void>();
  // The sessions' verifications are read at once (a chunk of their own, so the first load stays
  // small): the panel shows its session's after a reload, the inbox rows say what was verified.
  const verifications: Promise<PanelVerifications> = import('./verificationSetup').then((setup) =>
    setup.startVerifications(services, () => changed.fire()),
  );
  verifications.catch((err: unknown) => services.log.error(`the verifications could not be read: ${errorMessage(err)}`));
  let row: (() => vscode.TreeItem) | undefined;
  let loading: Promise<ReviewCommandHandlers> | undefined;
  const load = (): Promise<ReviewCommandHandlers> =>
    (loading ??= Promise.all([import('./ultrareviewFeature'), verifications]).then(([feature, store]) =>
      feature.activateUltrareview(
        services,
        (summary: ReviewSummary | undefined) => {
          row = summary ? () => feature.reviewInboxItem(summary) : undefined;
          changed.fire();
        },
        store,
      ),
    ));
  services.context.subscriptions.push(changed);
  for (const id of REVIEW_COMMANDS) registerCommand(services, id, async (...args) => (await load())[id]?.(...argsFor(id, args)));
  if (services.context.workspaceState.get<unknown>(REVIEW_THREADS_KEY) !== undefined) {
    load().catch((err: unknown) => services.log.error(`review threads could not be restored: ${errorMessage(err)}`));
  }
  return { item: () => row?.(), onDidChange: changed.event };
}
