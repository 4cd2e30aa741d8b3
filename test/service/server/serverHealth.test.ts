// The probes (src/service/http/health.ts) of real processes on a real PostgreSQL: an API
// replica and a worker say ready while the database answers, not ready while it is stopped, and
// ready again once it is back, without a restart of their own. The probes need no token, take
// any Host (a kubelet dials the pod's address) and say nothing beyond ok or not.
import * as assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import * as http from 'node:http';
import { sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { EXAMPLES_DIR, startServer, startWorker, tempDir, type ServerProcess, type WorkerProcess } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';
import * as path from 'node:path';

interface ProbeAnswer {
  status: number;
  text: string;
}

async function probe(base: string, pathname: string, init: RequestInit = {}): Promise<ProbeAnswer> {
  const response = await fetch(`${base}${pathname}`, { signal: AbortSignal.timeout(10_000), ...init });
  return { status: response.status, text: await response.text() };
}

/** A GET with the Host header a kubelet sends (the pod's address), which fetch would replace. */
function getWithHost(base: string, pathname: string, host: string): Promise<ProbeAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${pathname}`, { headers: { host }, timeout: 10_000 }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on('error', reject);
  });
}

const OK = { status: 200, text: '{"status":"ok"}' };
const UNAVAILABLE = { status: 503, text: '{"status":"unavailable"}' };

/** Probes until the answer is `want` or `until` settles (then one last look); resolves with the last answer. */
async function probeUntil(base: string, pathname: string, want: ProbeAnswer, until: Promise<unknown>): Promise<ProbeAnswer> {
  let settled = false;
  void until.finally(() => (settled = true));
  const { answer } = await waitFor(async () => ({ last: settled, answer: await probe(base, pathname) }), {
    until: ({ last, answer }) => answer.status === want.status || last,
    message: `${pathname} to answer ${want.status}`,
    timeoutMs: 60_000,
  });
  return answer;
}

/** The worker's probe address, from the line it logs when its listener is up. */
async function workerProbeBase(worker: WorkerProcess): Promise<string> {
  const match = /probes on (http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(worker.stderr());
  assert.ok(match, `the worker logs where its probes listen:\n${worker.stderr()}`);
  return match[1] as string;
}

describe('health probes of a replica and a worker on PostgreSQL', function () {
  this.timeout(120_000);
  let cluster: PostgresCluster;
  let api: ServerProcess | undefined;
  let worker: WorkerProcess | undefined;

  before(async () => {
    cluster = await sharedPostgresCluster();
  });
  afterEach(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    api = worker = undefined;
  });

  it('are ready while the database answers, not while it is stopped, and ready again after its restart', async () => {
    const database = await cluster.createDatabase();
    api = await startServer({ store: database });
    worker = await startWorker({
      store: database,
      agent: `scripted:${path.join(EXAMPLES_DIR, 'approve.json')}`,
      extraArgs: ['--health-port', '0', '--scratch', tempDir()],
    });
    const workerBase = await workerProbeBase(worker);
    for (const base of [api.url, workerBase]) {
      assert.deepEqual(await probe(base, '/healthz'), OK);
      assert.deepEqual(await probe(base, '/readyz'), OK);
    }

    // Down for a while: both say not ready (and still live) until it is back, then ready again.
    const restarted = cluster.restart({ downMs: 4_000 });
    const during = await Promise.all([api.url, workerBase].map((base) => probeUntil(base, '/readyz', UNAVAILABLE, restarted)));
    const liveDuring = await Promise.all([api.url, workerBase].map((base) => probe(base, '/healthz')));
    await restarted;
    assert.deepEqual(during, [UNAVAILABLE, UNAVAILABLE], 'not ready while the database is stopped');
    assert.deepEqual(liveDuring, [OK, OK], 'still live: a database outage is no reason to restart the process');
    const after = await Promise.all([api.url, workerBase].map((base) => probeUntil(base, '/readyz', OK, new Promise(() => {}))));
    assert.deepEqual(after, [OK, OK], 'ready again once the database is back');
    assert.match(api.stderr(), /readiness: not ready \(/);
    assert.match(api.stderr(), /readiness: ready/);
  });

  it('answer without a token and for any Host, say nothing else, and open nothing else', async () => {
    const database = await cluster.createDatabase();
    api = await startServer({ store: database });
    // What a kubelet sends: the pod's address as Host, no token.
    const podAddress = '10.1.2.3:8787';
    assert.deepEqual(await getWithHost(api.url, '/readyz', podAddress), OK);
    assert.deepEqual(await getWithHost(api.url, '/healthz?verbose=1', podAddress), OK);
    const head = await fetch(`${api.url}/readyz`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.equal((await probe(api.url, '/readyz', { method: 'POST', body: '{}' })).status, 405);
    // Every other path still needs the guard and the token.
    assert.equal((await probe(api.url, '/v1/code/sessions')).status, 401);
    assert.equal((await getWithHost(api.url, '/v1/code/sessions', podAddress)).status, 403);
    assert.equal((await probe(api.url, '/healthz/extra')).status, 401);
    assert.ok(!/GET \/(healthz|readyz) \d/.test(api.stderr()), 'probes are not logged one line each');
    assert.ok(!api.stderr().includes(database.replace(/^postgres:\/\//, '')), 'the database URL is not in the log');
  });

  it('the journal server is ready while its data folder is writable', async () => {
    api = await startServer();
    assert.deepEqual(await probe(api.url, '/readyz'), OK);
    rmSync(api.dataDir, { recursive: true, force: true });
    assert.deepEqual(await probe(api.url, '/readyz'), UNAVAILABLE);
    assert.deepEqual(await probe(api.url, '/healthz'), OK);
  });
});
