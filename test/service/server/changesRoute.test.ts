// GET /v1/ultraplan/sessions/{id}/changes on a real server on 127.0.0.1: a session host whose
// approvals are recorded in the session's workspace (as the local service records them), two
// users signed in, a real git repository.
import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import type * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { WORKSPACE_KEY } from '../../../src/core/agentLaunch';
import { changesPath, ChangesSinceApprovalSchema } from '../../../src/core/changesSinceApproval';
import { controlResponseEvent } from '../../../src/core/protocol';
import { localServiceWorkspace, recordingApprovals } from '../../../src/service/changes/sessionWorkspace';
import { SessionHost } from '../../../src/service/host/sessionHost';
import { SessionsServer } from '../../../src/service/http/server';
import { AuthenticationError, type RequestAuthenticator } from '../../../src/service/identity/authenticator';
import type { Principal } from '../../../src/service/identity/sessionOwner';
import { JournalServerStore } from '../../../src/service/store/journalStore';
import { allEvents, approveAsShown, createRequest, pendingPlanRequest, scenarioFactory, waitForStatus } from '../hostTestKit';
import { git as sh } from '../../support/review/gitRepo';

/** Two people, by their bearer token. */
class TwoUsers implements RequestAuthenticator {
  async authenticate(req: http.IncomingMessage): Promise<Principal> {
    const sub = /^Bearer (alice|bob)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!sub) throw new AuthenticationError('unknown token');
    return { kind: 'user', sub, name: sub, groups: [], reviewGroups: [], admin: false };
  }
}

describe('GET /v1/ultraplan/sessions/{id}/changes', function () {
  this.timeout(60_000);
  let dir: string;
  let repo: string;
  let host: SessionHost;
  let server: SessionsServer;
  let base: string;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-changes-route-'));
    repo = path.join(dir, 'repo');
    await fs.mkdir(repo);
    sh(repo, 'init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, 'README.md'), '# Example\n');
    await fs.writeFile(path.join(repo, 'old.txt'), 'old\n');
    sh(repo, 'add', '-A');
    sh(repo, 'commit', '-q', '-m', 'base');
    host = new SessionHost({
      agentFactory: await scenarioFactory('approve.json'),
      approvals: recordingApprovals(localServiceWorkspace, () => {}),
    });
    server = new SessionsServer({
      store: new JournalServerStore(host, 'memory', localServiceWorkspace),
      token: null,
      authenticator: new TwoUsers(),
    });
    const { port } = await server.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await server.close();
    await host.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function call(user: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${user}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: await response.json() };
  }

  /** Alice's session planning in `workspace`, stopped at its plan. */
  async function sessionIn(workspace: string): Promise<string> {
    const request = createRequest();
    request.session_context = { ...request.session_context, [WORKSPACE_KEY]: workspace };
    const created = await call('alice', 'POST', '/v1/sessions', request);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    await waitForStatus(host, id, 'requires_action', 15_000);
    return id;
  }

  async function approve(id: string): Promise<void> {
    const plan = pendingPlanRequest(allEvents(host, id));
    const sent = await call('alice', 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(plan.requestId, approveAsShown(plan.plan))],
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    await waitForStatus(host, id, 'idle', 15_000);
  }

  it('answers its owner with the diff since approval, another user as every route does, and 409 before approval', async () => {
    const id = await sessionIn(repo);
    const early = await call('alice', 'GET', changesPath(id));
    assert.equal(early.status, 409);
    assert.match(early.body.error.message, /no plan of this session was approved/);

    // Work from before the approval is part of the record, not of the changes.
    await fs.writeFile(path.join(repo, 'before.txt'), 'before approval\n');
    await approve(id);
    await fs.writeFile(path.join(repo, 'README.md'), '# Example\n\nSee CHANGELOG.md.\n');
    await fs.writeFile(path.join(repo, 'CHANGELOG.md'), '# Changelog\n');
    await fs.rm(path.join(repo, 'old.txt'));

    const answer = await call('alice', 'GET', changesPath(id));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const changes = ChangesSinceApprovalSchema.parse(answer.body);
    assert.equal(changes.session_id, id);
    assert.deepEqual(changes.files, [
      { path: 'CHANGELOG.md', status: 'added' },
      { path: 'README.md', status: 'modified' },
      { path: 'old.txt', status: 'deleted' },
    ]);
    assert.match(changes.diff, /^\+See CHANGELOG\.md\.$/m);
    assert.equal(sh(repo, 'rev-parse', `refs/ultraplan/approved/${id}`).trim(), changes.approved_commit);
    assert.ok(Date.parse(changes.approved_at) <= Date.parse(changes.computed_at));

    const other = await call('bob', 'GET', changesPath(id));
    assert.equal(other.status, 403);
    assert.match(other.body.error.message, /belongs to another user/);
    assert.equal((await call('bob', 'GET', `/v1/sessions/${id}`)).status, 403, 'the same answer as reading the session');
    const unknown = await call('alice', 'GET', changesPath('session_nothere'));
    assert.equal(unknown.status, 404);
    assert.equal((await call('alice', 'POST', changesPath(id), {})).status, 405);
  });

  it('says 409 "not a git repository" for a session whose workspace is not in git', async () => {
    const plain = path.join(dir, 'plain');
    await fs.mkdir(plain);
    const id = await sessionIn(plain);
    await approve(id);
    const answer = await call('alice', 'GET', changesPath(id));
    assert.equal(answer.status, 409);
    assert.equal(answer.body.error.message, 'not a git repository: no record of changes');
  });
});
