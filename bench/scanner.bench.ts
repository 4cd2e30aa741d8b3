// The scanner on a long session: 100,000 tool calls with 1 KB results and a rejected plan every
// 50 calls, read in pages of 100 events (the API's default page). Ours (validates what it reads,
// keeps only ExitPlanMode results) against Claude Code's logic (no validation, keeps every
// tool_result), in the same run, median of 5. Goals: ours >= 1.0x its speed at < 1/10 of its memory.
import { ExitPlanModeScanner, type ScanVerdict } from '../src/core/scanner';
import { APPROVED_PLAN_MARKER } from '../src/core/protocol';
import { ClaudeCodeScanner } from './claudeCodeScanner';
import { collectGarbage, repeat, result, type BenchResult } from './measure';

export const title = 'ExitPlanModeScanner, 100,000 tool calls, 1 KB results, a rejected plan every 50 calls';

const TOOL_CALLS = 100_000;
const PLAN_EVERY = 50;
const RESULT_BYTES = 1024;
const PAGE = 100;
const RUNS = 5;

interface Scanner {
  ingest(batch: readonly unknown[]): ScanVerdict;
  readonly rejectCount: number;
  readonly storedResultCount: number;
}

const variants: Array<{ name: string; create: () => Scanner }> = [
  { name: "Claude Code's logic (no validation, keeps every tool_result)", create: () => new ClaudeCodeScanner() },
  { name: 'ours', create: () => new ExitPlanModeScanner() },
];

const FILLER = 'lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(Math.ceil(RESULT_BYTES / 57));

/** The session as pages of events, shaped like the wire; ends with an approved plan. */
function generatePages(): unknown[][] {
  const events: unknown[] = [];
  const assistant = (content: unknown[]) => ({
    type: 'assistant',
    uuid: `u${events.length}`,
    session_id: 's',
    parent_tool_use_id: null,
    message: { role: 'assistant', content },
  });
  const user = (content: unknown[]) => ({
    type: 'user',
    uuid: `u${events.length}`,
    session_id: 's',
    parent_tool_use_id: null,
    message: { role: 'user', content },
  });
  let plans = 0;
  for (let i = 0; i < TOOL_CALLS; i++) {
    const id = `toolu_${i}`;
    events.push(
      assistant([
        { type: 'text', text: `Reading file ${i}` },
        { type: 'tool_use', id, name: 'Read', input: { file_path: `/repo/src/file${i}.ts` } },
      ]),
    );
    // Distinct text per result, as a real session has.
    const text = `${i}:${FILLER}`.slice(0, RESULT_BYTES);
    events.push(user([{ type: 'tool_result', tool_use_id: id, content: text }]));
    if ((i + 1) % PLAN_EVERY === 0) {
      const planId = `plan_${plans++}`;
      const plan = `# Plan revision ${plans}\n\n${FILLER.slice(0, 900)}`;
      events.push(assistant([{ type: 'tool_use', id: planId, name: 'ExitPlanMode', input: { plan } }]));
      const last = i + 1 === TOOL_CALLS;
      events.push(
        user([
          last
            ? { type: 'tool_result', tool_use_id: planId, content: `User approved.\n\n${APPROVED_PLAN_MARKER}${plan}` }
            : { type: 'tool_result', tool_use_id: planId, content: `Rejected: please revise step ${plans}.`, is_error: true },
        ]),
      );
    }
  }
  const pages: unknown[][] = [];
  for (let i = 0; i < events.length; i += PAGE) pages.push(events.slice(i, i + PAGE));
  return pages;
}

function ingestAll(scanner: Scanner, pages: readonly unknown[][], fresh: boolean): ScanVerdict {
  let verdict: ScanVerdict = { kind: 'unchanged' };
  for (const page of pages) {
    // `fresh`: every page becomes new objects and strings, as when parsed off the wire, so what
    // a scanner keeps is really retained by it and not shared with the generated input.
    verdict = scanner.ingest(fresh ? (JSON.parse(JSON.stringify(page)) as unknown[]) : page);
  }
  return verdict;
}

// Each measurement in its own synchronous function, so the scanner is a stack local that is
// garbage once the function returns (in an async function it could live on in its context and
// be counted in the next variant's baseline).
function ingestSeconds(create: () => Scanner, pages: readonly unknown[][]): number {
  collectGarbage();
  const scanner = create();
  const start = process.hrtime.bigint();
  ingestAll(scanner, pages, false);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function retainedMb(create: () => Scanner, pages: readonly unknown[][]): { mb: number; held: number } {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const scanner = create();
  ingestAll(scanner, pages, true);
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  // Read after measuring, so the scanner is certainly alive while heapUsed is taken.
  return { mb: (after - before) / (1024 * 1024), held: scanner.storedResultCount };
}

export async function run(): Promise<BenchResult[]> {
  const pages = generatePages();
  const eventCount = pages.reduce((n, p) => n + p.length, 0);

  // Both must agree before their speed means anything.
  for (const v of variants) {
    const s = v.create();
    const verdict = ingestAll(s, pages, false);
    if (verdict.kind !== 'approved' || s.rejectCount !== TOOL_CALLS / PLAN_EVERY - 1) {
      throw new Error(`${v.name}: unexpected outcome ${JSON.stringify(verdict).slice(0, 80)}, rejectCount ${s.rejectCount}`);
    }
  }

  const rates = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const retained = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const stored = new Map<string, number>();

  // Interleaved, so drift on a shared machine hits both alike. The agreement check above was
  // the warm-up.
  await repeat(RUNS, () => {
    for (const v of variants) rates.get(v.name)!.push(eventCount / ingestSeconds(v.create, pages));
    for (const v of variants) {
      const { mb, held } = retainedMb(v.create, pages);
      retained.get(v.name)!.push(mb);
      stored.set(v.name, held);
    }
    return 0;
  });

  const [claudeCode, ours] = variants.map((v) => v.name) as [string, string];
  const note = `${eventCount.toLocaleString('en')} events in pages of ${PAGE}`;
  return [
    result(`ingest: ${claudeCode}`, 'events/s', 'higher', rates.get(claudeCode)!, { note }),
    result('ingest: ours', 'events/s', 'higher', rates.get(ours)!, { baseline: `ingest: ${claudeCode}` }),
    result(`retained heap: ${claudeCode}`, 'MB', 'lower', retained.get(claudeCode)!, {
      note: `${stored.get(claudeCode)} tool_results held`,
    }),
    result('retained heap: ours', 'MB', 'lower', retained.get(ours)!, {
      baseline: `retained heap: ${claudeCode}`,
      note: `${stored.get(ours)} tool_results held`,
    }),
  ];
}
