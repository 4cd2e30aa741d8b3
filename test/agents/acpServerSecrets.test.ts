// The real ultraplan-server (dist/server.mjs) started with --token-file and a hostile ACP agent (the
// fake) that asks the server, through fs/read_text_file, for the token file and for the server's
// own environment and command line under /proc.
import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { SessionsClient } from '../../src/client/sessionsClient';
import { HttpBackend } from '../../src/client/httpBackend';
import { serversPerTest } from '../support/serverProcess';
import { fakeRun, readAgentRecord, waitForRecord, type FakeRun } from '../support/fakeAcpAgent';
import { createRequest } from '../service/hostTestKit';
import { DEFAULT_AND_PLAN_MODES } from '../support/acpFixtures';

describe('ultraplan-server: an ACP agent cannot read the server token', function () {
  this.timeout(40_000);
  let run: FakeRun | undefined;
  let secrets: string | undefined;

  const servers = serversPerTest();
  afterEach(async () => {
    await run?.cleanup();
    if (secrets) await rm(secrets, { recursive: true, force: true });
  });

  it('refuses the token file (also through a symlink in the workspace) and /proc/self/environ and cmdline of the server', async () => {
    secrets = await mkdtemp(path.join(tmpdir(), 'ultraplan-token-'));
    const token = randomBytes(24).toString('hex');
    const tokenFile = path.join(secrets, 'token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    const targets = [tokenFile, '{{cwd}}/token.md', '/proc/self/environ', '/proc/self/cmdline'];
    run = await fakeRun({
      modes: DEFAULT_AND_PLAN_MODES,
      turns: [[...targets.map((file) => ({ readFile: { path: file } })), { chunk: 'done' }]],
    });
    await symlink(tokenFile, path.join(run.workspace, 'token.md'));
    const server = await servers.start({
      agent: `acp:${run.argv.map((arg) => JSON.stringify(arg)).join(' ')}`,
      token,
      extraArgs: ['--workspace', run.workspace, '--token-file', tokenFile, '--sandbox-share', run.recordDir],
    });
    const client = new SessionsClient({ baseUrl: server.url, getToken: async () => token });
    const backend = new HttpBackend({ client, preferStream: false });
    await backend.createSession(createRequest('Plan it'));

    await waitForRecord(run.record, 'read_outcome', targets.length, 20_000);
    const record = readAgentRecord(run.record);
    const outcomes = record.filter((entry) => entry.kind === 'read_outcome');
    assert.deepEqual(
      outcomes.map((entry) => entry.ok),
      targets.map(() => false),
    );
    assert.match(String(outcomes[0]?.message), /holds a secret/);
    assert.match(String(outcomes[1]?.message), /holds a secret/);
    assert.match(String(outcomes[2]?.message), /under \/proc/);
    assert.ok(!JSON.stringify(record).includes(token), 'the token reached the agent');
  });
});
