// The sessions' verifications against their approved plans, set up at activation in a chunk of
// their own: the store (read at once, so the panel shows its session's after a reload), the words
// the inbox and the status bar show of it, and the verification that starts by itself when a
// followed session's execution ends (ultraplan.verify.afterExecution).
import * as vscode from 'vscode';
import { approvedRevision } from '../../core/execution/verifySession';
import { completedWithVerification, endedExecutions } from '../../core/execution/verificationWords';
import type { ExtensionServices } from '../commands/services';
import { PanelVerifications } from '../review/panelVerifications';
import { ReviewPanel } from '../review/reviewPanel';
import { setVerificationWords } from '../status/verificationWords';
import { VERIFY_AGAINST_PLAN_COMMAND } from './commandIds';

/** The store, with its words and the start after each execution; `redraw` redraws the inbox's rows. */
export function startVerifications(services: ExtensionServices, redraw: () => void): PanelVerifications {
  const store = new PanelVerifications(services.context.workspaceState, services.log, new vscode.EventEmitter<string>());
  setVerificationWords((key, revisions) => {
    const planHash = approvedRevision(revisions)?.planHash;
    return completedWithVerification(store.forPlan(key, planHash), planHash);
  });
  services.context.subscriptions.push(
    store,
    ReviewPanel.setVerifications(store),
    store.onDidChange(redraw),
    verifyWhenExecutionsEnd(services),
  );
  redraw();
  return store;
}

/** Whether a verification starts by itself when a followed session's execution ends (on unless set off). */
function verifiesAfterExecution(): boolean {
  return vscode.workspace.getConfiguration('ultraplan.verify').get<unknown>('afterExecution') !== false;
}

/** Starts a verification of each session whose execution this window saw end, once per plan and end. */
function verifyWhenExecutionsEnd(services: ExtensionServices): vscode.Disposable {
  const seen = new Map<string, string>();
  const look = (): void => {
    const ends = endedExecutions(
      seen,
      services.sessions.all.map((s) => ({ key: s.key, phase: s.phase, planHash: approvedRevision(s.snapshot.revisions)?.planHash })),
    );
    if (!ends.length || !verifiesAfterExecution()) return;
    for (const end of ends) {
      services.log.info(`[${end.key}] the execution ended: verifying it against the approved plan`);
      void vscode.commands.executeCommand(VERIFY_AGAINST_PLAN_COMMAND, end.key, { auto: true });
    }
  };
  look();
  return services.sessions.onDidChange(look);
}
