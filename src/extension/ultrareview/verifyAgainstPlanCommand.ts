// "Ultraplan: Verify Against Plan" (docs/execution.md "Verification"): the fleet checks what changed
// since a followed session's plan was approved against that plan, the report goes to an output
// channel, the result to the window's store (the panel's conformance checklist, kept across a
// reload), and the outcome to a notification whose Continue asks the same session to carry out a
// missing step. The panel's Continue on a step comes here too. Loaded with the command's first use.
import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import { SessionsError } from '../../core/errors';
import { approvedRevision, continueStepMessage, missingSteps, noRecordReason, reportedProgress } from '../../core/execution/verifySession';
import { toPanelVerification } from '../../core/execution/toPanelVerification';
import { readPlanSteps } from '../../core/execution/steps';
import { diffText } from '../../core/review/changes';
import type { PanelVerifications } from '../review/panelVerifications';
import {
  outOfPlanMessage,
  redoStepMessage,
  verificationFindings,
  type VerificationFinding,
} from '../../core/execution/verificationThreads';
import type { PersistedThread } from '../../core/review/persisted';
import { hasGaps, verificationDetail, verificationHeadline } from '../../core/execution/verificationOutcome';
import { stepReports, verificationReportText } from '../../core/execution/verificationReport';
import type { PlanStep } from '../../core/execution/steps';
import { parseGitDiff } from '../../core/review/changes';
import { progressLine } from '../../core/review/progress';
import { DEFAULT_REVIEW_LIMITS, sizeRefusal } from '../../core/review/scope';
import { readChangesSinceApproval, recordClientFor } from '../../client/changesSinceApproval';
import type { ReviewerSource } from '../../client/review/fleetRunner';
import { collectChange, ReviewChangeError, type CollectedChange } from '../../client/review/gitChange';
import { verifyAgainstPlan, type VerifyResult } from '../../client/review/verifyAgainstPlan';
import type { ExtensionServices } from '../commands/services';
import { pickApprovedSession } from '../review/approvedSession';
import { continueAfterExecution } from '../sessions/continueAfterExecution';
import type { FollowedSession } from '../sessions/followedSession';

/** Shows a verification's claims as the review's comment threads (reviewThreads.ts), replacing the last review's. */
export type ShowThreads = (root: string, headline: string, findings: readonly VerificationFinding[]) => Promise<unknown>;

export interface VerifyFleet {
  sources: readonly ReviewerSource[];
  verifiers?: readonly ReviewerSource[];
  finders: number;
}

type Change = Pick<CollectedChange, 'files' | 'withheld' | 'scopeText'> & {
  /** What the changes were read against: the record at approval, or HEAD. */
  base: string;
  /** The repository the files are relative to, when known here (else the workspace folder). */
  root?: string;
};

/** What a caller may add: Continue on a step the session's last verification found missing; `auto`: started by the execution's end, so nothing is asked and what stops it is logged, not shown. */
export interface VerifyOptions {
  continueStep?: string;
  auto?: boolean;
}

/** Tells the person why nothing runs (a notification), or, for a verification nobody asked for, the log. */
type Say = (level: 'info' | 'warning', text: string) => void;

let channel: vscode.OutputChannel | undefined;
let running = false;

/**
 * Verifies the session `key` names (a caller's, else the panel's), else the only one with an
 * approved plan, else the one the person picks; `fleet` says who verifies.
 */
export async function verifyAgainstPlanCommand(
  services: ExtensionServices,
  fleet: () => Promise<VerifyFleet | undefined>,
  key: string | undefined,
  verifications: PanelVerifications,
  showThreads: ShowThreads,
  options: VerifyOptions = {},
): Promise<void> {
  if (options.continueStep !== undefined) {
    await continueFromPanel(services, verifications, key, options.continueStep);
    return;
  }
  const say: Say = options.auto
    ? (_level, text) => services.log.info(`verification after the execution ended, not started: ${text}`)
    : (level, text) => void (level === 'info' ? vscode.window.showInformationMessage(text) : vscode.window.showWarningMessage(text));
  if (running) {
    say('info', 'Ultraplan: a verification is running already.');
    return;
  }
  if (!vscode.workspace.isTrusted) {
    say('warning', 'Ultraplan: verification runs git and agents on this machine, which an untrusted workspace does not allow.');
    return;
  }
  const session = await pickApprovedSession(services.sessions, key, 'Verify which session against its approved plan?');
  if (!session) return;
  const approved = approvedRevision(session.snapshot.revisions);
  const plan = approved?.plan;
  if (approved === undefined || plan === undefined) {
    say('info', `Ultraplan: the approved plan of "${session.title}" is not known in this window yet.`);
    return;
  }
  const change = await changeOf(session, say, options.auto === true);
  if (!change) return;
  const agents = await fleet();
  if (!agents) return;
  running = true;
  verifications.setRunning(session.key, true);
  let result: VerifyResult;
  try {
    result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Ultraplan: verifying "${session.title}" against its plan`,
        cancellable: true,
      },
      (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        const reported = reportedProgress(session.state.execution?.checklist);
        return verifyAgainstPlan({
          plan,
          change,
          sources: agents.sources,
          ...(agents.verifiers?.length ? { verifiers: agents.verifiers } : {}),
          finders: agents.finders,
          ...(reported ? { reported } : {}),
          signal: abort.signal,
          onProgress: (p) => progress.report({ message: progressLine(p) }),
        });
      },
    );
  } finally {
    running = false;
    verifications.setRunning(session.key, false);
  }
  const { outcome, outline } = result;
  // A cancelled run checked nothing: the last verification that did stays.
  if (outcome.kind !== 'cancelled') {
    const digest = createHash('sha256').update(diffText(change.files)).digest('hex').slice(0, 16);
    const at = new Date().toISOString();
    const kept = toPanelVerification(outcome, {
      planHash: approved.planHash,
      changes: `${change.base} · diff ${digest}`,
      scope: change.scopeText,
      at,
    });
    await verifications.keep(session.key, kept);
    await verifications.retain(new Set(services.sessions.all.map((s) => s.key)));
    const findings = verificationFindings(kept, session.key);
    const root = change.root ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (findings.length && root) await showThreads(root, `Verified against the plan: ${kept.headline}`, findings);
  }
  const out = (channel ??= vscode.window.createOutputChannel('Ultraplan Verification'));
  if (!services.context.subscriptions.includes(out)) services.context.subscriptions.push(out);
  out.clear();
  out.append(
    `Verify against plan: "${session.title}"\n\n${verificationReportText(outcome, stepReports(outline, outcome), change.scopeText)}`,
  );
  if (change.withheld.length) out.append(`\nLeft out as secrets (never sent): ${change.withheld.join(', ')}\n`);
  services.log.info(`[${session.key}] verification: ${verificationHeadline(outcome)}; ${verificationDetail(outcome)}`);

  const missing = missingSteps(outline.steps, outcome);
  const showReport = 'Show Report';
  const continueLabel = 'Continue';
  const text = `Ultraplan: "${session.title}": ${verificationHeadline(outcome)}. ${verificationDetail(outcome)}${
    missing.length ? `. Missing: ${missing.map((s) => `step ${s.id}`).join(', ')}` : ''
  }.`;
  const buttons = missing.length && session.readOnly === undefined ? [showReport, continueLabel] : [showReport];
  const clean = outcome.kind === 'verified' && !hasGaps(outcome);
  const answer = clean
    ? await vscode.window.showInformationMessage(text, ...buttons)
    : await vscode.window.showWarningMessage(text, ...buttons);
  if (answer === showReport) out.show(true);
  if (answer !== continueLabel) return;
  const step = missing.length === 1 ? missing[0] : await pickStep(missing);
  if (!step) return;
  const explanation = outcome.kind === 'verified' ? outcome.steps.find((s) => s.id === step.id)?.explanation : undefined;
  await continueStep(services, session, continueStepMessage(step, explanation));
}

/** Fix on a verification's thread: the session that executed the plan is asked, as Continue asks it. */
export async function fixPlanClaim(services: ExtensionServices, finding: PersistedThread): Promise<void> {
  const claim = finding.plan;
  const session = claim && services.sessions.get(claim.sessionKey);
  if (!claim || !session) {
    void vscode.window.showWarningMessage('Ultraplan: the session that executed the plan is no longer followed here; nothing was sent.');
    return;
  }
  if (session.readOnly !== undefined) {
    void vscode.window.showWarningMessage(`Ultraplan: "${session.title}" is read-only here (${session.readOnly}); nothing was sent.`);
    return;
  }
  if (claim.kind === 'out_of_plan') {
    await continueStep(services, session, outOfPlanMessage(finding));
    return;
  }
  const plan = approvedRevision(session.snapshot.revisions)?.plan;
  const step = plan === undefined ? undefined : readPlanSteps(plan).steps.find((s) => s.id === claim.stepId);
  if (!step) {
    void vscode.window.showWarningMessage(
      `Ultraplan: step ${claim.stepId ?? '?'} is not in the plan "${session.title}" approved last; nothing was sent.`,
    );
    return;
  }
  await continueStep(services, session, redoStepMessage(step, finding));
}

/** The panel's Continue on a step: only on a step the last verification of the plan approved now found missing. */
async function continueFromPanel(
  services: ExtensionServices,
  verifications: PanelVerifications,
  key: string | undefined,
  stepId: string,
): Promise<void> {
  const session = key === undefined ? undefined : services.sessions.get(key);
  const approved = session && approvedRevision(session.snapshot.revisions);
  const verification = session && verifications.forPlan(session.key, approved?.planHash);
  const verified = verification?.steps.find((s) => s.id === stepId);
  const step = approved?.plan === undefined ? undefined : readPlanSteps(approved.plan).steps.find((s) => s.id === stepId);
  if (!session || !step || verified?.verdict !== 'missing') {
    void vscode.window.showWarningMessage(
      `Ultraplan: step ${stepId} is not a missing step of the last verification of ${session ? `"${session.title}"` : 'that session'}; nothing was sent.`,
    );
    return;
  }
  if (session.readOnly !== undefined) {
    void vscode.window.showWarningMessage(`Ultraplan: "${session.title}" is read-only here (${session.readOnly}); nothing was sent.`);
    return;
  }
  await continueStep(services, session, continueStepMessage(step, verified.explanation));
}

async function pickStep(steps: readonly PlanStep[]): Promise<PlanStep | undefined> {
  const picked = await vscode.window.showQuickPick(
    steps.map((step) => ({ label: `Step ${step.id}`, detail: step.title, step })),
    { placeHolder: 'Continue the session with which missing step?' },
  );
  return picked?.step;
}

/** Sends the message to the session that executed the plan (continueAfterExecution.ts) and says how it went. */
async function continueStep(services: ExtensionServices, session: FollowedSession, message: string): Promise<void> {
  services.log.info(`[${session.key}] continue after verification (${message.length} chars)`);
  const sent = await continueAfterExecution(session, message, services.sessions);
  if (!sent.sent) {
    void vscode.window.showWarningMessage(`Ultraplan: ${sent.message}`);
    return;
  }
  if (!sent.followed) {
    void vscode.window.showInformationMessage(
      `Ultraplan: asked "${session.title}" to carry out the missing step. This window did not follow its execution, so it does not follow the new turn: verify again when it is done.`,
    );
  }
}

/** The session's changes since approval from its service, or (no record there) the workspace's changes since HEAD if the person agrees. */
async function changeOf(session: FollowedSession, say: Say, auto: boolean): Promise<Change | undefined> {
  const backend = session.backend;
  const client = await recordClientFor(backend, session.sessionId);
  let why: string;
  if (backend.kind === 'claude-web') {
    const branch = await branchChangeOf(session, say);
    if (!branch || !('why' in branch)) return branch;
    why = branch.why;
  } else if (client) {
    try {
      const changes = await readChangesSinceApproval(client, session.sessionId);
      const parsed = sendableDiff(changes.diff, session, say);
      if (!parsed) return undefined;
      const taken = new Date(changes.computed_at).toLocaleString();
      return {
        ...parsed,
        base: `record ${changes.approved_commit.slice(0, 12)}`,
        scopeText: `the changes since the plan was approved (record ${changes.approved_commit.slice(0, 12)}, diff taken ${taken})`,
      };
    } catch (err) {
      if (!(err instanceof SessionsError && err.kind === 'conflict')) throw err;
      why = noRecordReason(err.message);
    }
  } else {
    why = `${backend.label} keeps no record of the changes since approval`;
  }
  // Changes since HEAD are a guess the person has to agree to: never taken unasked.
  if (auto) {
    say('info', `there is no record of what changed since "${session.title}" was approved (${why})`);
    return undefined;
  }
  const againstHead = 'Verify against HEAD';
  const answer = await vscode.window.showWarningMessage(
    `Ultraplan: there is no record of what changed since "${session.title}" was approved (${why}). Verify this workspace's changes since HEAD instead, untracked files included?`,
    againstHead,
  );
  if (answer !== againstHead) return undefined;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) {
    void vscode.window.showWarningMessage('Ultraplan: open the folder with the git repository the plan was carried out in.');
    return undefined;
  }
  try {
    const collected = await collectChange(folder, { kind: 'since', rev: 'HEAD', includeUntracked: true });
    return { ...collected, base: 'HEAD', root: collected.root };
  } catch (err) {
    if (!(err instanceof ReviewChangeError)) throw err;
    void vscode.window.showWarningMessage(`Ultraplan: ${err.message}`);
    return undefined;
  }
}

/** The diff parsed with what must never be sent withheld; undefined (and said why) when it is too large or empty. */
function sendableDiff(diff: string, session: FollowedSession, say: Say): ReturnType<typeof parseGitDiff> | undefined {
  const parsed = parseGitDiff(diff);
  const refusal = sizeRefusal(parsed.size, DEFAULT_REVIEW_LIMITS);
  if (refusal) {
    say('warning', `Ultraplan: ${refusal}`);
    return undefined;
  }
  if (parsed.files.length === 0) {
    const secrets = parsed.withheld.length ? ` (only files that look like secrets, never sent: ${parsed.withheld.join(', ')})` : '';
    say('info', `Ultraplan: nothing changed since "${session.title}" was approved${secrets}; there is nothing to verify.`);
    return undefined;
  }
  return parsed;
}

/**
 * A Claude Code on the web session's changes: its outcome branch against where it left its
 * starting revision, fetched into this window's clone (client/claudeWeb/branchChanges.ts); why not,
 * when the branch cannot be read here, so the caller may offer HEAD instead.
 */
async function branchChangeOf(session: FollowedSession, say: Say): Promise<Change | undefined | { why: string }> {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
  if (!folder) return { why: 'its branch can only be read in a clone of its repository, and no folder is open' };
  const { BranchChangesError, readBranchChanges } = await import('../../client/claudeWeb/branchChanges');
  try {
    const resource = await session.backend.getSession(session.sessionId);
    const changes = await readBranchChanges(resource.session_context, folder);
    const parsed = sendableDiff(changes.diff, session, say);
    if (!parsed) return undefined;
    const head = changes.head.slice(0, 12);
    return {
      ...parsed,
      base: `${changes.branch} ${head}`,
      root: changes.root,
      scopeText: `the changes on ${changes.branch} (at ${head}) since it left ${changes.revision ?? 'the default branch'} (${changes.base.slice(0, 12)})`,
    };
  } catch (err) {
    if (!(err instanceof BranchChangesError)) throw err;
    return { why: `its branch cannot be read here: ${err.message}` };
  }
}
