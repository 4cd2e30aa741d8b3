import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { controlResponseEvent, userMessageEvent } from '../../../src/core/protocol';
import { runServerCli, serverForSuite, startServer, tempDir } from '../../support/serverProcess';
import { createRequest, example, pendingPlanRequest } from '../hostTestKit';
import { allEvents, assertError, call, createSession, waitForStatus } from './serverTestKit';
import { waitFor } from '../../support/wait';

describe('ultraplan-server over HTTP', function () {
  this.timeout(30_000);
  const server = serverForSuite({ scenario: example('approve.json') });

  it('creates, gets, lists, pages events, sends and archives, with the CCR headers and an ignored x-organization-uuid', async () => {
    const headers = server.headers({ 'x-organization-uuid': '00000000-0000-0000-0000-000000000000' });
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Add a changelog', 'ultraplan: changelog'), { headers });
    assert.equal(created.status, 200);
    assert.match(created.headers.get('content-type') ?? '', /^application\/json/);
    const id = created.body.id as string;
    assert.deepEqual(Object.keys(created.body).sort(), [
      'created_at',
      'environment_id',
      'id',
      'session_context',
      'session_status',
      'title',
      'type',
      'updated_at',
    ]);
    assert.equal(created.body.title, 'ultraplan: changelog');
    assert.equal(created.body.session_status, 'running');
    assert.deepEqual(created.body.session_context, { sources: [], outcomes: [], model: 'scripted' });

    await waitForStatus(server, id, 'requires_action');
    const got = await call(server, 'GET', `/v1/sessions/${id}`, undefined, { headers });
    assert.equal(got.status, 200);
    assert.equal(got.body.id, id);

    const list = await call(server, 'GET', '/v1/sessions');
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((s: { id: string }) => s.id === id));
    assert.equal(list.body.has_more, false);
    assert.equal(list.body.last_id, list.body.data.at(-1).id);

    // Paging: pages of 2 add up to the whole log, each with first_id/last_id and has_more.
    const whole = await allEvents(server, id);
    const paged = await allEvents(server, id, 2);
    assert.deepEqual(paged, whole);
    const firstPage = await call(server, 'GET', `/v1/sessions/${id}/events?limit=2`);
    assert.equal(firstPage.body.has_more, true);
    assert.equal(firstPage.body.first_id, whole[0].id);
    assert.equal(firstPage.body.last_id, whole[1].id);
    assert.equal(whole[0].type, 'control_request');
    assert.equal(whole[1].message.content, 'Add a changelog');
    for (let i = 1; i < whole.length; i++) assert.ok(whole[i - 1].id < whole[i].id);

    const pending = pendingPlanRequest(whole);
    const sent = await call(server, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(pending.requestId, { behavior: 'allow', updatedInput: { plan: pending.plan } })],
    });
    assert.equal(sent.status, 200);
    assert.equal(sent.body.data[0].type, 'control_response');
    assert.ok(sent.body.data[0].id > whole.at(-1).id);
    await waitForStatus(server, id, 'idle');

    const archived = await call(server, 'POST', `/v1/sessions/${id}/archive`, {});
    assert.equal(archived.status, 200);
    assert.equal(archived.body.session_status, 'archived');
  });

  it('answers every error as JSON with its status, and a refused request stores nothing', async () => {
    const id = await createSession(server);
    await waitForStatus(server, id, 'requires_action');
    const sessionsBefore = (await call(server, 'GET', '/v1/sessions')).body.data.length;
    const eventsBefore = await allEvents(server, id);

    assertError(
      await call(server, 'GET', `/v1/sessions/${id}`, undefined, { headers: {} }),
      401,
      'authentication_error',
      /missing bearer token/,
    );
    assertError(
      await call(
        server,
        'POST',
        `/v1/sessions/${id}/events`,
        { events: [userMessageEvent('x')] },
        { headers: server.headers({ authorization: 'Bearer wrong' }) },
      ),
      401,
      'authentication_error',
      /refused/,
    );
    assertError(await call(server, 'GET', '/v1/sessions/session_unknown'), 404, 'not_found_error', /no session/);
    assertError(await call(server, 'GET', '/v1/sessions/session_unknown/events'), 404, 'not_found_error', /no session/);
    assertError(await call(server, 'GET', '/v2/other'), 404, 'not_found_error', /no such route/);
    const wrongMethod = await call(server, 'DELETE', `/v1/sessions/${id}`);
    assertError(wrongMethod, 405, 'method_not_allowed_error', /allowed: GET/);
    assert.equal(wrongMethod.headers.get('allow'), 'GET');
    assertError(
      await call(server, 'POST', '/v1/sessions', undefined, { raw: '{"title": "x", "events": [' }),
      400,
      'invalid_request_error',
      /not valid JSON/,
    );
    assertError(
      await call(server, 'POST', `/v1/sessions/${id}/events`, undefined, { raw: 'nope' }),
      400,
      'invalid_request_error',
      /not valid JSON/,
    );
    assertError(await call(server, 'POST', '/v1/sessions', { events: [] }), 400, 'invalid_request_error', /title/);
    assertError(
      await call(server, 'POST', '/v1/sessions', { title: 'x', events: [{ type: 'event', data: { no: 'type' } }] }),
      400,
      'invalid_request_error',
      /invalid session request/,
    );
    assertError(await call(server, 'POST', `/v1/sessions/${id}/events`, { events: 'many' }), 400, 'invalid_request_error', /events/);
    assertError(
      await call(server, 'POST', `/v1/sessions/${id}/events`, {
        events: [{ type: 'assistant', message: { role: 'assistant', content: [] } }],
      }),
      400,
      'invalid_request_error',
      /only the agent/,
    );
    assertError(await call(server, 'GET', `/v1/sessions/${id}/events?limit=0`), 400, 'invalid_request_error', /limit/);
    assertError(await call(server, 'GET', `/v1/sessions/${id}/events?limit=abc`), 400, 'invalid_request_error', /limit/);
    const huge = { events: [userMessageEvent('x'.repeat(2 * 1024 * 1024))] };
    assertError(await call(server, 'POST', `/v1/sessions/${id}/events`, huge), 413, 'request_too_large', /exceeds/);
    assertError(
      await call(server, 'POST', '/v1/sessions', { ...createRequest(), padding: 'x'.repeat(2 * 1024 * 1024) }),
      413,
      'request_too_large',
      /exceeds/,
    );
    // Without a content-length (chunked), the limit holds too and the client still gets its 413.
    let chunks = 0;
    const chunked = await fetch(`${server.url}/v1/sessions/${id}/events`, {
      method: 'POST',
      headers: server.headers(),
      body: new ReadableStream({
        pull(controller) {
          if (chunks++ < 40) controller.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)));
          else controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    assertError({ status: chunked.status, body: await chunked.json() }, 413, 'request_too_large', /exceeds 1048576 bytes/);
    assertError(
      await call(server, 'POST', `/v1/sessions/${id}/events`, {
        events: [controlResponseEvent('req_unknown', { behavior: 'deny', message: 'no' })],
      }),
      400,
      'invalid_request_error',
      /no control_request req_unknown awaits an answer/,
    );

    assert.equal((await call(server, 'GET', '/v1/sessions')).body.data.length, sessionsBefore);
    assert.deepEqual(await allEvents(server, id), eventsBefore);

    const pending = pendingPlanRequest(eventsBefore);
    const decision = { events: [controlResponseEvent(pending.requestId, { behavior: 'deny', message: 'Please add tests' })] };
    assert.equal((await call(server, 'POST', `/v1/sessions/${id}/events`, decision)).status, 200);
    assertError(await call(server, 'POST', `/v1/sessions/${id}/events`, decision), 409, 'conflict_error', /already answered/);

    assert.equal((await call(server, 'POST', `/v1/sessions/${id}/archive`, {})).status, 200);
    const afterArchive = await allEvents(server, id);
    assertError(
      await call(server, 'POST', `/v1/sessions/${id}/events`, { events: [userMessageEvent('hello?')] }),
      409,
      'conflict_error',
      /archived/,
    );
    assertError(await call(server, 'POST', `/v1/sessions/${id}/archive`, {}), 409, 'conflict_error', /already archived/);
    assert.deepEqual(await allEvents(server, id), afterArchive);
  });

  it('logs one line per request on stderr and never the token', async () => {
    const marker = `/v1/sessions/session_logline_${Date.now()}`;
    await call(server, 'GET', marker);
    const lines = await waitFor(
      () =>
        server
          .stderr()
          .split('\n')
          .filter((l) => l.includes(marker)),
      { message: "the request's log line", until: (found) => found.length > 0 },
    );
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /GET \/v1\/sessions\/session_logline_\d+ 404 [\d.]+ms$/);
    assert.ok(server.token && !server.stderr().includes(server.token), 'the token never reaches the log');
    assert.equal(server.stdout().split('\n').filter(Boolean).length, 1, 'stdout holds only the listening line');
  });
});

describe('ultraplan-server CLI', function () {
  this.timeout(30_000);

  it('prints --help and exits 0', async () => {
    const run = await runServerCli(['--help']);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /Usage: ultraplan-server/);
    assert.match(run.stdout, /scripted:FILE/);
    assert.match(run.stdout, /--insecure-no-auth/);
  });

  it('refuses to start without a token, and --insecure-no-auth on a non-loopback host', async () => {
    const dataDir = tempDir();
    const base = ['--port', '0', '--data-dir', dataDir, '--agent', `scripted:${example('approve.json')}`];
    const noToken = await runServerCli(base);
    assert.equal(noToken.code, 2);
    assert.match(noToken.stderr, /no token: set ULTRAPLAN_SERVER_TOKEN or pass --token-file/);
    assert.equal(noToken.stdout, '');
    const exposed = await runServerCli([...base, '--host', '0.0.0.0', '--insecure-no-auth']);
    assert.equal(exposed.code, 2);
    assert.match(exposed.stderr, /refusing --insecure-no-auth on 0\.0\.0\.0/);
    const unknownFlag = await runServerCli([...base, '--bogus'], { env: { ULTRAPLAN_SERVER_TOKEN: 't' } });
    assert.equal(unknownFlag.code, 2);
    assert.match(unknownFlag.stderr, /bogus/);
    const badAgent = await runServerCli(['--port', '0', '--data-dir', dataDir, '--agent', 'telepathic:x'], {
      env: { ULTRAPLAN_SERVER_TOKEN: 't' },
    });
    assert.equal(badAgent.code, 2);
    assert.match(badAgent.stderr, /unknown agent "telepathic:x"; expected one of: scripted:FILE/);
  });

  it('--insecure-no-auth on loopback serves without a token; --token-file supplies the token', async () => {
    const open = await startServer({ token: null });
    try {
      assert.equal((await call(open, 'GET', '/v1/sessions', undefined, { headers: {} })).status, 200);
      assert.match(open.stderr(), /WARNING: --insecure-no-auth/);
    } finally {
      await open.stop();
    }
    const dir = tempDir();
    const tokenFile = path.join(dir, 'token');
    await fs.writeFile(tokenFile, 'file-token-123\n', { mode: 0o644 });
    const withFile = await startServer({ token: null, extraArgs: ['--token-file', tokenFile] });
    try {
      assert.match(withFile.stderr(), /WARNING: --token-file \S+ can be read by other users \(mode 644\); chmod 600 it/);
      assertError(await call(withFile, 'GET', '/v1/sessions', undefined, { headers: {} }), 401, 'authentication_error', /missing/);
      assert.equal(
        (await call(withFile, 'GET', '/v1/sessions', undefined, { headers: { authorization: 'Bearer file-token-123' } })).status,
        200,
      );
    } finally {
      await withFile.stop();
    }
  });

  it('refuses a second server on the same data directory', async () => {
    const first = await startServer();
    try {
      const second = await runServerCli(['--port', '0', '--data-dir', first.dataDir, '--agent', `scripted:${example('approve.json')}`], {
        env: { ULTRAPLAN_SERVER_TOKEN: 't' },
      });
      assert.equal(second.code, 2);
      assert.match(second.stderr, /in use by another ultraplan-server/);
    } finally {
      await first.stop();
    }
  });
});

describe('ultraplan-server restarts', function () {
  this.timeout(60_000);

  it('a SIGTERM the moment it prints its listening line is a clean stop (exit 0), every time', async () => {
    // The listening line is what a supervisor (and the docs' test) reads as ready: a signal right
    // after it must find the handlers installed, not end the process as the default action does.
    for (let i = 0; i < 5; i += 1) {
      const server = await startServer({ dataDir: tempDir() });
      assert.equal(await server.stop(), 0, server.stderr());
    }
  });

  for (const how of ['SIGTERM', 'SIGKILL'] as const) {
    it(`loses no session and no event across a ${how} mid-session, and the scripted agent carries on`, async () => {
      const dataDir = tempDir();
      const scenario = example('slow.json');
      const first = await startServer({ scenario, dataDir });
      const token = first.token as string;
      const done = await createSession(first, 'first session');
      await waitForStatus(first, done, 'requires_action', 10_000);
      const donePending = pendingPlanRequest(await allEvents(first, done));
      const answer = await call(first, 'POST', `/v1/sessions/${done}/events`, {
        events: [controlResponseEvent(donePending.requestId, { behavior: 'deny', message: 'Add a rollback step' })],
      });
      assert.equal(answer.status, 200);
      // Created just before the stop: its agent is inside the scenario's first sleep.
      const running = await createSession(first, 'second session');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await call(first, 'GET', `/v1/sessions/${running}`)).body.session_status, 'running');
      const seenDone = await allEvents(first, done);
      const seenRunning = await allEvents(first, running);
      if (how === 'SIGTERM') assert.equal(await first.stop(), 0);
      else await first.kill();

      const second = await startServer({ scenario, dataDir, token });
      try {
        const list = (await call(second, 'GET', '/v1/sessions')).body.data.map((s: { id: string }) => s.id);
        assert.ok(list.includes(done) && list.includes(running));
        const afterDone = await allEvents(second, done);
        const afterRunning = await allEvents(second, running);
        assert.deepEqual(afterDone.slice(0, seenDone.length), seenDone, 'every event seen before the restart is still there, in order');
        assert.deepEqual(afterRunning.slice(0, seenRunning.length), seenRunning);
        assert.ok(
          afterDone.some((e) => e.type === 'control_response'),
          'the acknowledged decision survived',
        );
        // The running session's agent resumes and reaches its plan.
        await waitForStatus(second, running, 'requires_action', 15_000);
        const texts = (await allEvents(second, running)).flatMap((e) =>
          e.type === 'assistant' ? e.message.content.map((b: { text?: string }) => b.text ?? '') : [],
        );
        assert.deepEqual(
          texts.filter((t: string) => t.startsWith('Step')),
          ['Step one.', 'Step two, after a pause.'],
          'no step repeated or skipped',
        );
        // The denied session went on to its next step and finished its script.
        await waitForStatus(second, done, 'idle', 15_000);
      } finally {
        await second.stop();
      }
    });
  }
});
