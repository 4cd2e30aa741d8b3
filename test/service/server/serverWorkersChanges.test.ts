// What changed, on a team's server: the workspace is the worker's checkout, which the API replica
// cannot read. A real replica and a real worker on a real PostgreSQL database; the session works
// in a clone of a git repository; the worker records the checkout at approval and, when the
// agent's turn ends, stores the diff since, which the replica serves.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { changesPath, ChangesSinceApprovalSchema } from '../../../src/core/changesSinceApproval';
import { controlResponseEvent } from '../../../src/core/protocol';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { startServer, startWorker, type ServerProcess, type WorkerProcess } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';
import { createRequest } from '../hostTestKit';
import { call, waitForEvents, waitForStatus } from './serverTestKit';
import { git as sh } from '../../support/review/gitRepo';

describe('ultraplan-server workers: changes since approval', function () {
  this.timeout(120_000);
  let dir: string;
  let replica: ServerProcess;
  let worker: WorkerProcess;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ultraplan-worker-changes-'));
    const source = path.join(dir, 'source');
    await fs.mkdir(source);
    sh(source, 'init', '-q', '-b', 'main');
    await fs.writeFile(path.join(source, 'README.md'), '# Project\n');
    sh(source, 'add', '-A');
    sh(source, 'commit', '-q', '-m', 'base');
    // A planner whose execution takes a while, long enough for the test to do the agent's edit in it.
    const scenario = path.join(dir, 'scenario.json');
    await fs.writeFile(
      scenario,
      JSON.stringify({
        title: 'Plan, then a slow execution',
        steps: [{ plan: '# Plan\n\n1. Add NOTES.md.\n' }],
        onApprove: [{ sleep: 4000 }, { say: 'Executed.' }],
      }),
    );
    const database = await (await sharedPostgresCluster()).createDatabase();
    replica = await startServer({ store: database, token: randomUUID() });
    worker = await startWorker({
      store: database,
      agent: `scripted:${scenario}`,
      extraArgs: ['--allow-file-sources', '--scratch', path.join(dir, 'scratch')],
    });
  });

  after(async () => {
    await Promise.all([replica, worker].map((p) => p?.stop()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("serves the diff the worker stored when the agent's turn after approval ended, with its time", async () => {
    const request = createRequest('Add notes');
    request.session_context = {
      sources: [{ type: 'git_repository', url: `file://${path.join(dir, 'source')}`, revision: 'main' }],
      outcomes: [],
    };
    const created = await call(replica, 'POST', '/v1/sessions', request);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const events = await waitForEvents(replica, id, (e) => e.some(isPlanRequest), 30_000);
    await waitForStatus(replica, id, 'requires_action', 20_000);
    const before = await call(replica, 'GET', changesPath(id));
    assert.equal(before.status, 409);
    assert.match(before.body.error.message, /no changes since approval were stored/);

    const plan = events.find(isPlanRequest);
    const sent = await call(replica, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(plan.request_id, { behavior: 'allow', updatedInput: plan.request.input })],
    });
    assert.equal(sent.status, 200);
    // The agent's edit, once the worker recorded its checkout (the record comes before the agent hears of the approval).
    const checkout = path.join(dir, 'scratch', id);
    await waitFor(() => sh(checkout, 'for-each-ref', '--format=%(refname)', 'refs/ultraplan'), {
      message: 'the record of the checkout at approval',
      timeoutMs: 20_000,
      until: (refs) => refs.includes(`refs/ultraplan/approved/${id}`),
    });
    await fs.writeFile(path.join(checkout, 'NOTES.md'), 'notes of the agent\n');
    await waitForStatus(replica, id, 'idle', 30_000);

    const answer = await waitFor(() => call(replica, 'GET', changesPath(id)), {
      message: 'the stored changes',
      timeoutMs: 20_000,
      until: (a) => a.status === 200,
    });
    const changes = ChangesSinceApprovalSchema.parse(answer.body);
    assert.deepEqual(changes.files, [{ path: 'NOTES.md', status: 'added' }]);
    assert.match(changes.diff, /^\+notes of the agent$/m);
    assert.equal(changes.approved_commit, sh(checkout, 'rev-parse', `refs/ultraplan/approved/${id}`).trim());
    assert.ok(Date.parse(changes.computed_at) >= Date.parse(changes.approved_at));
    assert.match(worker.stderr(), new RegExp(`session ${id}: changes since approval stored \\(1 files\\)`));
  });
});

function isPlanRequest(event: any): boolean {
  return event.type === 'control_request' && event.request?.tool_name === 'ExitPlanMode';
}
