// BASELINE ONLY, not product code: the straightforward scanner that keeps every tool_result it
// sees, keyed by tool_use_id, as the reference poller does. It validates events with the same
// function as ours (readSessionEvent) and returns the same verdicts, so the benchmark measures
// only the difference in what is kept.
import { readSessionEvent, extractApprovedPlan, extractTeleportPlan, type ScanVerdict } from '../src/core/scanner';
import { EXIT_PLAN_MODE_TOOL, contentText } from '../src/core/protocol';

type ToolResult = { tool_use_id: string; content?: unknown; is_error?: boolean };

export class NaiveExitPlanModeScanner {
  private readonly calls: string[] = [];
  private readonly results = new Map<string, ToolResult>();
  private readonly rejected = new Set<string>();
  private terminated: string | null = null;
  private rescan = false;

  get rejectCount(): number {
    return this.rejected.size;
  }

  get storedResultCount(): number {
    return this.results.size;
  }

  ingest(batch: readonly unknown[]): ScanVerdict {
    for (const raw of batch) {
      const event = readSessionEvent(raw);
      if (typeof event === 'string') continue;
      if (event.type === 'assistant') {
        for (const block of event.message.content) {
          if (block.type === 'tool_use' && (block as { name: string }).name === EXIT_PLAN_MODE_TOOL) {
            this.calls.push((block as { id: string }).id);
          }
        }
      } else if (event.type === 'user' && typeof event.message.content !== 'string') {
        for (const block of event.message.content) {
          if (block.type === 'tool_result') this.results.set((block as ToolResult).tool_use_id, block as ToolResult);
        }
      } else if (event.type === 'result' && event.subtype !== 'success') {
        this.terminated = event.subtype;
      }
    }
    const shouldScan = batch.length > 0 || this.rescan;
    this.rescan = false;
    let found: ScanVerdict | null = null;
    if (shouldScan) {
      for (let i = this.calls.length - 1; i >= 0; i--) {
        const id = this.calls[i]!;
        if (this.rejected.has(id)) continue;
        const tr = this.results.get(id);
        if (tr === undefined) found = { kind: 'pending' };
        else if (tr.is_error === true) {
          const plan = extractTeleportPlan(contentText(tr.content));
          found = plan !== null ? { kind: 'teleport', plan } : { kind: 'rejected', id };
        } else {
          const approved = extractApprovedPlan(contentText(tr.content));
          if (approved === null) throw new Error('marker missing');
          found = { kind: 'approved', plan: approved.plan };
        }
        break;
      }
      if (found?.kind === 'approved' || found?.kind === 'teleport') return found;
    }
    if (found?.kind === 'rejected') {
      this.rejected.add(found.id);
      this.rescan = true;
    }
    if (this.terminated !== null) return { kind: 'terminated', subtype: this.terminated };
    return found ?? { kind: 'unchanged' };
  }
}
