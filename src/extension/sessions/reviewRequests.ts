// The review panel's requests, answered: each decision or reply is routed by the session key it
// carries to that followed session, checked there, and answered `sent` or `refused` once. Edit
// opens the plan in an editor (approved from there by Approve Edited Plan); Teleport checks every
// stop before the deny goes out, then saves the plan and opens it where the settings say.
import * as vscode from 'vscode';
import { Disposable } from '../../core/lifecycle';
import type {
  DecisionMessage,
  PanelAnswer,
  PanelRequest,
  SaveDraftMessage,
  SaveReplyDraftMessage,
  DecisionBinding,
} from '../../core/panelMessages';
import { panelDraftOf, replyDraftOf } from '../../core/sessionProjection';
import { PlanEdits } from '../review/planEdits';
import type { ConcreteTarget } from '../review/teleport';
import type { SettingsReader } from '../settings/settings';
import type { FollowedSession, DecisionOutcome } from './followedSession';
import type { SessionNotifier } from './sessionNotifier';
import { errorMessage } from '../../core/errors';
import { planHash } from '../../core/decision';

export interface ReviewRequestsPorts {
  log: vscode.LogOutputChannel;
  settings: Pick<SettingsReader, 'read'>;
  notifier: SessionNotifier;
  session(key: string): FollowedSession | undefined;
  /** Shows a session's review (after an edited plan was approved). */
  show(session: FollowedSession): void;
  /** Writes the sessions at once (a decision must survive a reload right after the click). */
  persistNow(): Promise<void>;
}

/** The answer a panel request gets from a decision's outcome. */
function answerOf(outcome: DecisionOutcome): PanelAnswer {
  return outcome.sent ? { result: 'sent' } : { result: 'refused', reason: outcome.message };
}

export class ReviewRequests extends Disposable {
  readonly #p: ReviewRequestsPorts;
  readonly edits: PlanEdits;

  constructor(ports: ReviewRequestsPorts) {
    super();
    this.#p = ports;
    this.edits = this._register(new PlanEdits((key) => ports.session(key)?.setEditing(undefined)));
  }

  /** Answers one request from the review panel: routed by its session key, `sent` or `refused`. */
  async answer(request: PanelRequest): Promise<PanelAnswer> {
    try {
      const session = this.#p.session(request.sessionKey);
      if (!session) {
        const reason = 'This is for a session Ultraplan no longer follows; nothing was sent.';
        this.#p.log.warn(`review panel: ${request.type} refused: unknown session ${request.sessionKey}`);
        this.#p.notifier.say('warning', reason);
        return { result: 'refused', reason };
      }
      if (request.type === 'reply') return answerOf(await session.decisions.reply(request.text));
      if (request.type === 'continue') return answerOf(await session.decisions.continuePlanning(request.text));
      return await this.decide(session, request);
    } finally {
      // Decisions and replies are written at once, not on the debounce: a reload right after a
      // click must not lose them (the browser's storage may not flush on shutdown).
      await this.#p.persistNow().catch((err: unknown) => this.#p.log.warn(`persisting sessions failed: ${String(err)}`));
    }
  }

  saveDraft(draft: SaveDraftMessage | SaveReplyDraftMessage): void {
    const session = this.#p.session(draft.sessionKey);
    if (!session) {
      this.#p.log.warn(`review panel: draft for an unknown session ${draft.sessionKey}`);
      return;
    }
    if (draft.type === 'saveReplyDraft') session.saveReplyDraft(replyDraftOf(draft));
    else session.saveDraft(panelDraftOf(draft));
  }

  /** A decision from the panel (click or keybinding), checked by its session. */
  async decide(session: FollowedSession, request: DecisionMessage): Promise<PanelAnswer> {
    const binding = request.binding;
    switch (request.type) {
      case 'approve':
        return answerOf(
          await (request.notes === undefined
            ? session.decisions.approve(binding)
            : session.decisions.approveWithNotes(binding, request.notes)),
        );
      case 'reject':
        return answerOf(await session.decisions.reject(binding, request.feedback, request.comments));
      case 'edit': {
        const refused = session.decisions.refusal(binding);
        const plan = session.pendingPlan?.plan;
        if (refused !== undefined || plan === undefined) {
          const reason = refused ?? 'There is no plan to edit.';
          this.#p.notifier.say('warning', reason);
          return { result: 'refused', reason };
        }
        this.#p.log.info(`[${session.key}] editing plan ${binding.toolUseId}`);
        session.setEditing(binding.toolUseId);
        await this.edits.open(session.key, binding, plan);
        return { result: 'sent' };
      }
      case 'teleport':
        return this.#teleport(session, binding);
    }
  }

  async approveEdited(): Promise<void> {
    const edit = this.edits.current();
    if (!edit) {
      void vscode.window.showWarningMessage('Ultraplan: open the edited plan first (use Edit in the review panel).');
      return;
    }
    const session = this.#p.session(edit.sessionKey);
    if (!session) {
      void vscode.window.showWarningMessage('Ultraplan: the session of this edited plan is no longer followed; nothing was sent.');
      return;
    }
    const outcome = await session.decisions.approveEdited(edit.binding, edit.text);
    if (outcome.sent) {
      await this.edits.close(edit.document);
      this.#p.show(session);
    }
  }

  async #teleport(session: FollowedSession, binding: DecisionBinding): Promise<PanelAnswer> {
    const { log, notifier } = this.#p;
    const settings = this.#p.settings.read();
    const refused = session.decisions.refusal(binding);
    if (refused !== undefined) {
      notifier.say('warning', refused);
      return { result: 'refused', reason: refused };
    }
    const { openTeleportTarget, pickTeleportTarget, plansFolderProblem, savePlanFile, targetProblem } = await import('../review/teleport');
    const chosen = settings['teleport.target'];
    const target: ConcreteTarget | undefined = chosen === 'ask' ? await pickTeleportTarget(settings['teleport.taskCommand']) : chosen;
    if (!target) return { result: 'refused', reason: 'No teleport target was chosen; nothing was sent.' };
    // Everything that can stop the teleport is checked before the deny is sent: after it, the
    // remote has let go of the plan.
    const problem = (await plansFolderProblem(settings.plansDirectory)) ?? targetProblem(target, settings['teleport.taskCommand']);
    if (problem) {
      log.warn(`teleport refused: ${problem}`);
      notifier.say('warning', problem, {
        label: 'Open Settings',
        run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'ultraplan.teleport'),
      });
      return { result: 'refused', reason: problem };
    }
    const sent = await session.teleport(binding);
    if (!sent.sent) return { result: 'refused', reason: sent.message };
    if (sent.plan === undefined) return { result: 'sent' };
    let file: vscode.Uri;
    try {
      const { identity } = session;
      const revision = session.snapshot.revisions.find((r) => r.toolUseId === binding.toolUseId)?.revision;
      file = await savePlanFile(
        sent.plan,
        session.title,
        {
          sessionId: session.sessionId,
          ...(revision !== undefined ? { revision } : {}),
          planHash: planHash(sent.plan),
          ...(identity.agentLabel ? { agent: identity.agentLabel } : {}),
          backend: identity.backendLabel,
          decision: 'teleported',
        },
        settings.plansDirectory,
      );
      log.info(`[${session.key}] teleported plan saved to ${file.fsPath}`);
      session.addSavedPlan(file.fsPath);
    } catch (err) {
      const message = `The plan was teleported but could not be saved: ${errorMessage(err)}`;
      log.error(`[${session.key}] ${message}`);
      session.setOutcome(message, 'error');
      // Do not lose the plan: show it in an editor the person can save.
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: sent.plan });
      await vscode.window.showTextDocument(doc);
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
      return { result: 'sent' };
    }
    const archived = await session.archiveAfterTeleport(settings['teleport.archiveRemote']);
    try {
      const opened = await openTeleportTarget(target, file, sent.plan, settings['teleport.taskCommand'], log);
      session.setOutcome(`${opened.text}${archived ? ' The planning session was archived.' : ''}`, opened.level);
    } catch (err) {
      const message = `The plan is saved in ${vscode.workspace.asRelativePath(file)}, but opening it as ${target} failed: ${errorMessage(err)}`;
      log.error(`[${session.key}] ${message}`);
      session.setOutcome(message, 'error');
      void vscode.window.showErrorMessage(`Ultraplan: ${message}`);
    }
    return { result: 'sent' };
  }
}
