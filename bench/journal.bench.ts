// What the journal's per-line checksum costs: encoding records, and loading a session's journal
// at start, each against the same work without checksums (plain JSON lines, which the loader
// still reads for journals written before checksums existed).
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeLine, FileSessionStore, type LogRecord } from '../src/service/store/sessionStore';
import { repeat, result, type BenchResult } from './measure';

export const title = 'Journal lines with a checksum vs plain JSON lines';

const RECORDS = 10_000;
const RUNS = 5;

function records(): LogRecord[] {
  const text = 'The plan touches the build scripts and the release notes. '.repeat(30);
  return Array.from({ length: RECORDS }, (_, i) => ({
    t: 'event',
    event: {
      type: 'assistant',
      id: `e_${String(i + 1).padStart(12, '0')}`,
      message: { role: 'assistant', content: [{ type: 'text', text }] },
    },
    at: new Date(0).toISOString(),
  }));
}

async function loadRate(dataDir: string): Promise<number> {
  const store = new FileSessionStore(dataDir, { fsync: false });
  const started = process.hrtime.bigint();
  const [loaded] = await store.load();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (loaded?.records.length !== RECORDS) throw new Error(`loaded ${loaded?.records.length} records, expected ${RECORDS}`);
  return RECORDS / seconds;
}

async function journalDir(lines: string[]): Promise<string> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-bench-journal-'));
  const dir = path.join(dataDir, 'sessions', 'session_bench');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(
    path.join(dir, 'meta.json'),
    JSON.stringify({
      id: 'session_bench',
      title: 'bench',
      created_at: new Date(0).toISOString(),
      environment_id: null,
      session_context: null,
    }),
  );
  await fs.writeFile(path.join(dir, 'log.jsonl'), lines.join('\n') + '\n');
  return dataDir;
}

export async function run(): Promise<BenchResult[]> {
  const all = records();
  const encodeRate = (encode: (r: LogRecord) => string) => () => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    for (const record of all) bytes += encode(record).length;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (bytes === 0) throw new Error('nothing encoded');
    return RECORDS / seconds;
  };
  const plain = await repeat(
    RUNS,
    encodeRate((r) => JSON.stringify(r)),
    1,
  );
  const summed = await repeat(RUNS, encodeRate(encodeLine), 1);

  const plainDir = await journalDir(all.map((r) => JSON.stringify(r)));
  const summedDir = await journalDir(all.map(encodeLine));
  try {
    const plainLoad = await repeat(RUNS, () => loadRate(plainDir), 1);
    const summedLoad = await repeat(RUNS, () => loadRate(summedDir), 1);
    const note = `${RECORDS} assistant events of ~1.8 kB`;
    return [
      result('encode: plain JSON', 'records/s', 'higher', plain, { note }),
      result('encode: with checksum', 'records/s', 'higher', summed, { baseline: 'encode: plain JSON' }),
      result('load: plain JSON lines', 'records/s', 'higher', plainLoad, {
        note: `one journal of ${RECORDS} lines, read and parsed at start`,
      }),
      result('load: with checksums', 'records/s', 'higher', summedLoad, { baseline: 'load: plain JSON lines' }),
    ];
  } finally {
    await fs.rm(plainDir, { recursive: true, force: true });
    await fs.rm(summedDir, { recursive: true, force: true });
  }
}
