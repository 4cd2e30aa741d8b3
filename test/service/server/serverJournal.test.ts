// The server's journal under attack from the disk: a disk that fills up mid-append, a line
// damaged on disk that still reads as JSON, and journals written before lines had checksums.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { JOURNAL_DAMAGED_SUBTYPE } from '../../../src/service/host/sessionHost';
import { FileSessionStore, type LogRecord } from '../../../src/service/store/sessionStore';
import { startServer, tempDir } from '../../support/serverProcess';
import { example, pendingPlanRequest } from '../hostTestKit';
import { allEvents, call, createSession, waitForStatus } from './serverTestKit';

const journalOf = (dataDir: string, id: string) => path.join(dataDir, 'sessions', id, 'log.jsonl');

describe('ultraplan-server journal: a full disk loses nothing acknowledged', function () {
  this.timeout(60_000);
  let mountPoint: string | undefined;

  before(function () {
    if (process.getuid?.() !== 0) {
      console.log('      skipped: mounting a tiny tmpfs needs root (run the suite as root to fill a real disk)');
      this.skip();
    }
    const dir = tempDir('ultraplan-tmpfs-');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' });
    } catch (err) {
      // Root inside a container without CAP_SYS_ADMIN cannot mount either.
      console.log(`      skipped: cannot mount a tiny tmpfs here (${String((err as { stderr?: unknown }).stderr ?? err).trim()})`);
      this.skip();
    }
    mountPoint = dir;
  });
  after(() => {
    if (mountPoint) execFileSync('umount', ['-l', mountPoint]);
  });

  it('a failed append is cut back, so the next acknowledged event survives a restart', async () => {
    const dataDir = path.join(mountPoint as string, 'data');
    const first = await startServer({ scenario: example('approve.json'), dataDir });
    const filler = path.join(mountPoint as string, 'filler');
    let id = '';
    try {
      id = await createSession(first);
      await waitForStatus(first, id, 'requires_action');
      // Leave about 8 KiB free, then send an event three times that size.
      const { bavail, bsize } = await fs.statfs(mountPoint as string);
      await fs.writeFile(filler, Buffer.alloc(Math.max(0, Number(bavail) * Number(bsize) - 8 * 1024)));
      const sizeBefore = (await fs.stat(journalOf(dataDir, id))).size;
      const tooBig = await call(first, 'POST', `/v1/sessions/${id}/events`, { events: [userMessageEvent('x'.repeat(24 * 1024))] });
      assert.equal(tooBig.status, 507, JSON.stringify(tooBig.body));
      assert.match(tooBig.body.error.message, /disk is full: nothing was stored/);
      assert.equal((await fs.stat(journalOf(dataDir, id))).size, sizeBefore, 'the partial write was cut back');
      // Space comes back; the next event is acknowledged.
      await fs.rm(filler);
      const after = await call(first, 'POST', `/v1/sessions/${id}/events`, { events: [userMessageEvent('after the disk filled up')] });
      assert.equal(after.status, 200);
    } finally {
      await fs.rm(filler, { force: true });
      await first.kill();
    }
    const second = await startServer({ scenario: example('approve.json'), dataDir, token: first.token });
    try {
      const events = await allEvents(second, id);
      assert.ok(
        events.some((e) => e.type === 'user' && e.message.content === 'after the disk filled up'),
        'the acknowledged event is still there after a restart',
      );
      assert.doesNotMatch(second.stderr(), /damaged line/);
    } finally {
      await second.stop();
    }
  });
});

describe('FileSessionStore: a batch starts on a fresh line', () => {
  it('after a leftover partial line that could not be cut back, the next batch is read back whole', async () => {
    const dataDir = tempDir();
    const logLines: string[] = [];
    const store = new FileSessionStore(dataDir, { fsync: false, log: (l) => logLines.push(l) });
    const id = 'session_freshline';
    await store.create({ id, title: 't', created_at: new Date().toISOString(), environment_id: null, session_context: null });
    const event = (n: number): LogRecord => ({
      t: 'event',
      event: { type: 'user', id: `e_${String(n).padStart(12, '0')}`, message: { role: 'user', content: `m${n}` } },
    });
    await store.append(id, [event(1)]);
    await fs.appendFile(journalOf(dataDir, id), '{"t":"event","event":{"type":"user","id":"e_0000000000');
    await store.append(id, [event(2), event(3)]);
    const [loaded] = await store.load();
    assert.deepEqual(
      loaded?.records.map((r) => (r.t === 'event' ? r.event.id : r.t)),
      ['e_000000000001', 'e_000000000002', 'e_000000000003'],
    );
    assert.deepEqual(loaded?.damagedLines, [2]);
    assert.ok(logLines.some((l) => /skipping damaged line 2/.test(l)));
  });
});

describe('ultraplan-server journal: a line damaged on disk is detected', function () {
  this.timeout(60_000);

  it('a decision whose line was altered (still valid JSON) does not re-open its request after a restart', async () => {
    const dataDir = tempDir();
    const first = await startServer({ scenario: example('approve.json'), dataDir });
    const id = await createSession(first);
    await waitForStatus(first, id, 'requires_action');
    const pending = pendingPlanRequest(await allEvents(first, id));
    const decision = { events: [controlResponseEvent(pending.requestId, { behavior: 'deny', message: 'Not this way' })] };
    assert.equal((await call(first, 'POST', `/v1/sessions/${id}/events`, decision)).status, 200);
    assert.equal(await first.stop(), 0);

    // One character of the request id changes on disk; the line is still valid JSON.
    const file = journalOf(dataDir, id);
    const lines = (await fs.readFile(file, 'utf8')).split('\n');
    const index = lines.findIndex((l) => l.includes('"control_response"'));
    assert.ok(index >= 0);
    const at = (lines[index] as string).indexOf(pending.requestId) + pending.requestId.length - 1;
    const original = (lines[index] as string)[at] as string;
    lines[index] = `${(lines[index] as string).slice(0, at)}${original === '0' ? '1' : '0'}${(lines[index] as string).slice(at + 1)}`;
    JSON.parse(lines[index] as string);
    await fs.writeFile(file, lines.join('\n'));

    const second = await startServer({ scenario: example('approve.json'), dataDir, token: first.token });
    try {
      const replay = await call(second, 'POST', `/v1/sessions/${id}/events`, {
        events: [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })],
      });
      assert.equal(replay.status, 400, `the request stays closed: ${JSON.stringify(replay.body)}`);
      assert.match(second.stderr(), new RegExp(`skipping damaged line ${index + 1} \\(checksum mismatch\\)`));
      const events = await allEvents(second, id);
      const notice = events.find((e) => e.type === 'system' && e.subtype === JOURNAL_DAMAGED_SUBTYPE);
      assert.deepEqual(notice?.lines, [index + 1]);
      assert.match(notice?.message, /can no longer be answered/);
      assert.equal((await call(second, 'GET', `/v1/sessions/${id}`)).body.session_status, 'idle');
    } finally {
      assert.equal(await second.stop(), 0);
    }
    // Said once: a third start finds the notice and adds nothing.
    const third = await startServer({ scenario: example('approve.json'), dataDir, token: first.token });
    try {
      const notices = (await allEvents(third, id)).filter((e) => e.type === 'system' && e.subtype === JOURNAL_DAMAGED_SUBTYPE);
      assert.equal(notices.length, 1);
    } finally {
      await third.stop();
    }
  });

  it('reads a journal written before lines had checksums, and keeps appending to it', async () => {
    const dataDir = tempDir();
    const id = 'session_legacy0000000000000000000001';
    const dir = path.join(dataDir, 'sessions', id);
    await fs.mkdir(dir, { recursive: true });
    const createdAt = '2026-11-01T10:00:00.000Z';
    await fs.writeFile(
      path.join(dir, 'meta.json'),
      JSON.stringify({
        id,
        title: 'ultraplan: legacy',
        created_at: createdAt,
        environment_id: null,
        session_context: null,
        agent_label: 'old',
      }),
    );
    const legacy = [
      {
        t: 'event',
        event: { type: 'user', id: 'e_000000000001', message: { role: 'user', content: 'Plan the legacy thing' } },
        at: createdAt,
      },
      { t: 'status', status: 'running', at: createdAt },
      {
        t: 'event',
        event: {
          type: 'assistant',
          id: 'e_000000000002',
          message: { role: 'assistant', content: [{ type: 'text', text: 'Which version?' }] },
        },
        at: createdAt,
      },
      { t: 'status', status: 'idle', at: createdAt },
      { t: 'checkpoint', state: null },
    ];
    await fs.writeFile(path.join(dir, 'log.jsonl'), legacy.map((r) => JSON.stringify(r)).join('\n') + '\n');

    const first = await startServer({ scenario: example('approve.json'), dataDir });
    try {
      assert.deepEqual(
        (await allEvents(first, id)).map((e) => e.id),
        ['e_000000000001', 'e_000000000002'],
      );
      assert.equal((await call(first, 'GET', `/v1/sessions/${id}`)).body.session_status, 'idle');
      assert.doesNotMatch(first.stderr(), /damaged/);
      assert.equal((await call(first, 'POST', `/v1/sessions/${id}/archive`, {})).status, 200);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    const text = await fs.readFile(path.join(dir, 'log.jsonl'), 'utf8');
    assert.match(text.trim().split('\n').at(-1) as string, /,"sum":"[0-9a-f]{16}"\}$/, 'new lines carry a checksum');
    const second = await startServer({ scenario: example('approve.json'), dataDir, token: first.token });
    try {
      assert.equal((await call(second, 'GET', `/v1/sessions/${id}`)).body.session_status, 'archived');
      assert.doesNotMatch(second.stderr(), /damaged/);
    } finally {
      await second.stop();
    }
  });
});
