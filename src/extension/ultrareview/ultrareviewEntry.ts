// The review's light side, registered at activation: its commands, and what the Plan Inbox shows of
// it. The rest (ultrareviewFeature.ts: threads, the controller, the picks) is imported by the first
// review command, or at once when this workspace has review threads to bring back after a reload.
import * as vscode from 'vscode';
import { REVIEW_THREADS_KEY } from '../../core/stateKeys';
import { registerCommand, type ExtensionServices } from '../commands/services';
import { REVIEW_CHANGES_COMMAND } from './commandIds';
import type { ReviewSummary } from './reviewController';
import type { ReviewCommandHandlers } from './ultrareviewFeature';

export const REVIEW_COMMANDS = [
  REVIEW_CHANGES_COMMAND,
  'ultraplan.cancelReview',
  'ultraplan.review.fix',
  'ultraplan.review.dismiss',
  'ultraplan.review.copy',
  'ultraplan.review.resolve',
  'ultraplan.review.reopen',
] as const;

/** What the inbox reads: the review's row (none before a review), and when it changes. */
export interface ReviewRows {
  item(): vscode.TreeItem | undefined;
  readonly onDidChange: vscode.Event<void>;
}

export function registerUltrareview(services: ExtensionServices): ReviewRows {
  const changed = new vscode.EventEmitter<void>();
  let row: (() => vscode.TreeItem) | undefined;
  let loading: Promise<ReviewCommandHandlers> | undefined;
  const load = (): Promise<ReviewCommandHandlers> =>
    (loading ??= import('./ultrareviewFeature').then((feature) =>
      feature.activateUltrareview(services, (summary: ReviewSummary | undefined) => {
        row = summary ? () => feature.reviewInboxItem(summary) : undefined;
        changed.fire();
      }),
    ));
  services.context.subscriptions.push(changed);
  for (const id of REVIEW_COMMANDS) registerCommand(services, id, async (...args) => (await load())[id]?.(...args));
  if (services.context.workspaceState.get<unknown>(REVIEW_THREADS_KEY) !== undefined) {
    load().catch((err: unknown) =>
      services.log.error(`review threads could not be restored: ${err instanceof Error ? err.message : String(err)}`),
    );
  }
  return { item: () => row?.(), onDidChange: changed.event };
}
