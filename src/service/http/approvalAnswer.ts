// How an append that counted an approval is answered: 202 while the quorum still waits (nothing
// went to the agent yet), 200 once this approval completed it; the body's `approval` says who
// approved so far and what is still needed, in words a client shows as they are.
import { approvalSummary, approvalsNeeded, type ApprovalState } from '../../core/planApprovals';
import type { AppendedEvent } from '../store/serverStore';

export interface ApprovalAnswer {
  status: 200 | 202;
  body: ApprovalState & { summary: string; needed: string[] };
}

export function approvalAnswer(stored: readonly AppendedEvent[]): ApprovalAnswer | null {
  const approval = stored.find((a) => a.approval)?.approval;
  if (!approval) return null;
  return {
    status: approval.released ? 200 : 202,
    body: { ...approval, summary: approvalSummary(approval), needed: approvalsNeeded(approval) },
  };
}
