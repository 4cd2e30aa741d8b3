// Which sessions of the local service a window follows on its own because another window on the
// same folder started them (src/client/localService/otherWindows.ts), and the look that never starts
// the service (findRunningService): a window that only looks must not keep a service alive.
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { controlResponseEvent, userMessageEvent, type SessionResource } from '../../../src/core/protocol';
import { parseEventBatch } from '../../../src/core/eventBatch';
import { WORKSPACE_KEY, withAgentLaunch, workspaceOf } from '../../../src/core/agentLaunch';
import { LocalService } from '../../../src/client/localService/localService';
import { sessionsToPickUp } from '../../../src/client/localService/otherWindows';
import { connectOrStartService } from '../../../src/client/localService/serviceLauncher';
import { HttpBackend } from '../../../src/client/httpBackend';
import { runAgentTurn } from '../../../src/client/review/agentTurn';
import { SESSION_PURPOSE_KEY, purposeOf, reviewRunTitle } from '../../../src/core/sessionPurpose';
import { servicePids } from '../../support/serviceProcess';
import { waitFor } from '../../support/wait';
import { cleanUpServices, clientOf, createSession, launcherOptions, scripted, serviceDir } from './serviceKit';

const FOLDER = '/home/me/project';
const SINCE = Date.parse('2026-12-01T10:00:00Z');

function session(id: string, status: string, createdAt: string, folder: string | null = FOLDER): SessionResource {
  return {
    type: 'session',
    id,
    title: id,
    session_status: status,
    created_at: createdAt,
    updated_at: createdAt,
    session_context: folder === null ? {} : { [WORKSPACE_KEY]: folder },
  } as SessionResource;
}

const before = '2026-12-01T09:00:00Z';
const after = '2026-12-01T10:00:05Z';

describe('sessions another window on the same folder started', () => {
  it('picks every live session of this folder, and any other one created since the window started looking', () => {
    const listed = [
      session('plan-waits', 'requires_action', before),
      session('agent-works', 'running', before),
      session('question-since', 'idle', after),
      session('finished-before', 'idle', before),
      session('archived', 'archived', after),
      session('other-folder', 'requires_action', after, '/home/me/other'),
      session('no-folder', 'requires_action', after, null),
      session('followed', 'requires_action', after),
    ];
    const picked = sessionsToPickUp(listed, { folder: FOLDER, since: SINCE, known: (id) => id === 'followed' });
    assert.deepEqual(
      picked.map((s) => s.id),
      ['plan-waits', 'agent-works', 'question-since'],
    );
  });

  it("never picks a review's finder or verifier run, marked by its purpose or (from before the mark) by its title", () => {
    const marked = { ...session('finder-marked', 'requires_action', after), title: 'any title' };
    marked.session_context = { ...marked.session_context, [SESSION_PURPOSE_KEY]: 'review' };
    const listed = [
      marked,
      { ...session('finder-unmarked', 'running', after), title: reviewRunTitle('finder', 3) },
      { ...session('verifier-unmarked', 'idle', after), title: reviewRunTitle('verify', 1) },
      { ...session('plan', 'requires_action', after), title: 'ultraplan: Ultrareview: finder 3' },
    ];
    assert.deepEqual(
      sessionsToPickUp(listed, { folder: FOLDER, since: SINCE, known: () => false }).map((s) => s.id),
      ['plan'],
    );
  });

  it('the creation request names the window folder, and only a non-empty text is taken back', () => {
    const request = withAgentLaunch({ title: 't', events: [] }, scripted('approve.json'), FOLDER);
    assert.equal(workspaceOf(request.session_context), FOLDER);
    assert.equal(workspaceOf(withAgentLaunch({ title: 't', events: [] }, scripted('approve.json')).session_context), undefined);
    assert.equal(workspaceOf({ [WORKSPACE_KEY]: 42 }), undefined);
    assert.equal(workspaceOf({ [WORKSPACE_KEY]: '' }), undefined);
  });
});

describe('looking for the local service without starting it', function () {
  this.timeout(60_000);
  afterEach(cleanUpServices);

  it("a review's run on the real service is listed as the review's, and another window on its folder leaves it alone", async () => {
    const connection = await connectOrStartService(launcherOptions(serviceDir()));
    const client = clientOf(connection);
    const http = new HttpBackend({ client, preferStream: false, kind: 'embedded' });
    // As the window's backend sends every session (backends.ts): the agent and the window's folder.
    const created: string[] = [];
    const reviewer = Object.assign(Object.create(http) as HttpBackend, {
      createSession: async (request: Parameters<HttpBackend['createSession']>[0], signal?: AbortSignal) => {
        const session = await http.createSession(withAgentLaunch(request, scripted('slow.json'), FOLDER), signal);
        created.push(session.id);
        return session;
      },
    });
    const plan = await client.createSession(
      withAgentLaunch(
        { title: 'ultraplan: plan', events: [{ type: 'event', data: userMessageEvent('plan') }] },
        scripted('slow.json'),
        FOLDER,
      ),
    );
    const stop = new AbortController();
    const turn = runAgentTurn({ backend: reviewer, title: reviewRunTitle('finder', 1), prompt: 'review', signal: stop.signal });
    try {
      const runId = await waitFor(() => created[0], { message: "the review's run to be created", timeoutMs: 20_000 });
      const listed = await client.listSessions();
      const run = listed.find((s) => s.id === runId);
      assert.equal(run?.session_context?.[SESSION_PURPOSE_KEY], 'review', 'the service keeps and lists the purpose');
      assert.equal(purposeOf(run!), 'review');
      assert.equal(purposeOf(listed.find((s) => s.id === plan.id)!), 'planning');
      assert.notEqual(run?.session_status, 'archived', 'listed while its turn runs');
      assert.deepEqual(
        sessionsToPickUp(listed, { folder: FOLDER, since: 0, known: () => false }).map((s) => s.id),
        [plan.id],
      );
    } finally {
      stop.abort();
      await turn;
    }
  });

  it('finds nothing and makes nothing where no service runs; finds the one that runs', async () => {
    const dir = serviceDir();
    const service = new LocalService(launcherOptions(dir));
    assert.equal(await service.ifRunning(), null);
    assert.equal(existsSync(dir), false, 'no folder, no token was made');
    assert.deepEqual(servicePids(dir), [], 'no service was started');

    const started = await connectOrStartService(launcherOptions(dir));
    const found = await service.ifRunning();
    assert.equal(found?.status.pid, started.status.pid);
    assert.equal(found?.spawned, false);
  });
});

describe('an answer given in one window, read by another on the same service', function () {
  this.timeout(60_000);
  afterEach(cleanUpServices);

  it("reaches the other window's next read as the answer to its request, before anything the agent does next", async () => {
    const service = await connectOrStartService(launcherOptions(serviceDir()));
    const [one, other] = [clientOf(service), clientOf(service)];
    const id = await createSession(one, scripted('approve.json'));
    await waitFor(() => one.getStatus(id), { message: 'the plan', timeoutMs: 15_000, until: (status) => status === 'requires_action' });
    const asked = await other.readEventsPages(id, null);
    const request = asked.events.find((e) => (e as { request?: { subtype?: string } }).request?.subtype === 'can_use_tool') as {
      request_id: string;
    };
    await one.sendEvents(id, [controlResponseEvent(request.request_id, { behavior: 'allow', updatedInput: {} })]);
    const next = await other.readEventsPages(id, asked.lastId);
    const batch = parseEventBatch(next.events);
    assert.equal(batch.answered?.[0], request.request_id, 'the first thing the other window reads is the answer');
    assert.equal((next.events[0] as { type?: unknown }).type, 'control_response');
  });
});
