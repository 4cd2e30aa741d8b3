// BASELINE ONLY, not product code: the ExitPlanMode scanner as Claude Code's own logic works
// (docs/protocol.md section 4): events are read with plain property access and no validation, and every
// tool_result is kept, keyed by tool_use_id, whatever tool it answers. Same verdicts as ours, so
// the benchmark measures what validating only what is read, and keeping only what is needed, cost.
import { extractApprovedPlan, extractTeleportPlan, type ScanVerdict } from '../src/core/scanner';
import { EXIT_PLAN_MODE_TOOL, contentText } from '../src/core/protocol';

type Block = { type?: string; id?: string; name?: string; tool_use_id?: string; content?: unknown; is_error?: boolean };
type Event = { type?: string; subtype?: string; message?: { content?: string | Block[] } };

export class ClaudeCodeScanner {
  private readonly calls: string[] = [];
  private readonly results = new Map<string, Block>();
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
    for (const raw of batch as Event[]) {
      const content = raw.message?.content;
      if (raw.type === 'assistant' && Array.isArray(content)) {
        for (const block of content) if (block.type === 'tool_use' && block.name === EXIT_PLAN_MODE_TOOL) this.calls.push(block.id!);
      } else if (raw.type === 'user' && Array.isArray(content)) {
        for (const block of content) if (block.type === 'tool_result') this.results.set(block.tool_use_id!, block);
      } else if (raw.type === 'result' && raw.subtype !== 'success') {
        this.terminated = raw.subtype ?? 'error';
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
