// readChangesSinceApproval: the path it asks, the
// answer parsed at the boundary, and a refusal carried as the server said it. Real HTTP on
// 127.0.0.1 with answers chosen per test; the route itself is tested against the real server
// (test/service/server/changesRoute.test.ts).
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SessionsClient } from '../../src/client/sessionsClient';
import { readChangesSinceApproval } from '../../src/client/changesSinceApproval';
import { noRecordReason } from '../../src/core/execution/verifySession';
import { SessionsError } from '../../src/core/errors';

const CHANGES = {
  type: 'changes_since_approval',
  session_id: 'session_abc',
  approved_commit: 'a'.repeat(40),
  approved_at: '2026-12-03T19:00:00.000Z',
  computed_at: '2026-12-03T19:05:00.000Z',
  files: [
    { path: 'src/app.ts', status: 'modified' },
    { path: 'NOTES.md', status: 'added' },
  ],
  diff: 'diff --git a/NOTES.md b/NOTES.md\nnew file mode 100644\n',
};

describe('readChangesSinceApproval', () => {
  let server: http.Server;
  let answer: { status: number; body: unknown };
  const asked: string[] = [];
  let client: SessionsClient;

  before(async () => {
    server = http.createServer((req, res) => {
      asked.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new SessionsClient({ baseUrl: `http://127.0.0.1:${port}`, getToken: async () => 'the-token' });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (asked.length = 0));

  it('asks GET /v1/ultraplan/sessions/{id}/changes with the id as given (the server reads either form) and returns the parsed changes', async () => {
    answer = { status: 200, body: CHANGES };
    const changes = await readChangesSinceApproval(client, 'cse_abc');
    assert.deepEqual(changes, CHANGES);
    assert.deepEqual(asked, ['GET /v1/ultraplan/sessions/cse_abc/changes Bearer the-token']);
  });

  it('refuses an answer that is not the changes (a file without its status)', async () => {
    answer = { status: 200, body: { ...CHANGES, files: [{ path: 'src/app.ts' }] } };
    await assert.rejects(readChangesSinceApproval(client, 'session_abc'), (err: unknown) => {
      assert.ok(err instanceof SessionsError);
      assert.equal(err.kind, 'bad_response');
      assert.match(err.message, /not a valid changes since approval .* at files\.0\.status/);
      return true;
    });
  });

  it("carries the server's reason when there is no record (409)", async () => {
    answer = {
      status: 409,
      body: { type: 'error', error: { type: 'conflict_error', message: 'not a git repository: no record of changes' } },
    };
    await assert.rejects(readChangesSinceApproval(client, 'session_abc'), (err: unknown) => {
      assert.ok(err instanceof SessionsError);
      assert.equal(err.kind, 'conflict');
      assert.match(err.message, /not a git repository: no record of changes/);
      // What Verify Against Plan tells the person: the server's own reason.
      assert.equal(noRecordReason(err.message), 'not a git repository: no record of changes');
      return true;
    });
  });
});
