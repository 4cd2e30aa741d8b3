// The claude-web backend end to end: the real session server (a child process with the scripted
// agent) behind the strict Claude-compatibility server, followed by the real poller, on the
// current wire: launch (the older create retired, then /v1/code/sessions), plan, reply, reject
// with comments, edited approve, approve (not archived), teleport (archived), 409s on archive,
// a refused decision, an expired login, the stream and the 3 s poll.
import { strict as assert } from 'node:assert';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SessionsError, UltraplanPollError } from '../../src/core/errors';
import { followUntilResult, pollForApprovedPlan } from '../../src/core/poller';
import { CLIENT_PLATFORM } from '../../src/core/codeSessions';
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  controlResponseEvent,
  planningSessionRequest,
  setPlanModeEvent,
  teleportDenyMessage,
  userMessageEvent,
  type CreateSessionRequest,
} from '../../src/core/protocol';
import type { PendingPlan } from '../../src/core/scanner';
import {
  attachClaudeWebBackend,
  createClaudeWebBackend,
  DECISION_REFUSAL_STATUSES,
  DEFAULT_CLOUD_MODEL,
  type ClaudeWebBackend,
  type ClaudeWebBackendOptions,
} from '../../src/client/claudeWeb/backend';
import { ClaudeWebError, claudeWebFailureOf } from '../../src/client/claudeWeb/errors';
import { buildLaunchRequest, completeLaunchRequest, outcomeBranch, ultraplanTitle } from '../../src/client/claudeWeb/launch';
import { startClaudeCompatProxy, type ClaudeCompatProxy, type RecordedRequest } from '../support/claudeCompatProxy';
import { assertUntouched, makeClaudeHome, makeGitRepo, type ClaudeHome } from '../support/claudeCompatFixtures';
import { DEFAULT_USER_AGENT } from '../../src/client/sessionsClient';
import { EXAMPLES_DIR, startServer, type ServerProcess } from '../support/serverProcess';
import { watchPhases } from '../support/pollPhases';
import { waitFor } from '../support/wait';

const ORG = 'org-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
const FAST = { pollIntervalMs: 50, timeoutMs: 15_000 };

describe('claude-web launch request (pure)', () => {
  const repository = { httpsUrl: 'https://github.com/acme/widgets', owner: 'acme', name: 'widgets', revision: 'main' };

  it('is what Claude Code sends: plan mode with the ultraplan flag, the prompt, the source, the outcome branch', () => {
    const request = buildLaunchRequest({
      prompt: 'Add a changelog\nand link it from the README',
      repository,
      environmentId: 'env_cloud',
      branch: 'claude/add-a-changelog-abcde',
      requestId: 'set-mode-1',
    });
    assert.deepEqual(request, {
      title: 'ultraplan: Add a changelog',
      events: [
        {
          type: 'event',
          data: {
            type: 'control_request',
            request_id: 'set-mode-1',
            request: { subtype: 'set_permission_mode', mode: 'plan', ultraplan: true },
          },
        },
        {
          type: 'event',
          data: {
            type: 'user',
            parent_tool_use_id: null,
            message: { role: 'user', content: 'Add a changelog\nand link it from the README' },
            session_id: '',
          },
        },
      ],
      session_context: {
        sources: [{ type: 'git_repository', url: 'https://github.com/acme/widgets', revision: 'main' }],
        outcomes: [
          { type: 'git_repository', git_info: { type: 'github', repo: 'acme/widgets', branches: ['claude/add-a-changelog-abcde'] } },
        ],
      },
      environment_id: 'env_cloud',
    });
  });

  it('the model: given, or the default, always in the context', () => {
    const request = buildLaunchRequest({ prompt: 'p', repository, environmentId: 'e', branch: 'claude/b', model: 'claude-sonnet-5' });
    assert.equal(request.session_context?.model, 'claude-sonnet-5');
  });

  it('titles and branch slugs', () => {
    assert.equal(ultraplanTitle('  fix the login flow  '), 'ultraplan: fix the login flow');
    assert.equal(ultraplanTitle('ultraplan: already titled'), 'ultraplan: already titled');
    assert.equal(ultraplanTitle(''), 'ultraplan: plan');
    assert.match(ultraplanTitle('x'.repeat(300)), /^ultraplan: x{79}…$/);
    assert.equal(outcomeBranch('ultraplan: Fix the Login flow (v2)!', 'f00d1'), 'claude/fix-the-login-flow-v2-f00d1');
    assert.equal(outcomeBranch('ultraplan: ???', 'f00d1'), 'claude/f00d1');
    assert.match(outcomeBranch('ultraplan: Add a changelog'), /^claude\/add-a-changelog-[0-9a-f]{5}$/);
    assert.equal(outcomeBranch(`ultraplan: ${'word '.repeat(30)}`, 'abcde').length <= 'claude/'.length + 40 + 6, true);
  });

  it('a request built without knowing the backend gets the create prompt as Claude Code sends it (session_id ""); one the caller named is kept', () => {
    const completed = completeLaunchRequest(
      planningSessionRequest('Add a changelog', 'Add a changelog', () => '1'),
      {
        repository,
        environmentId: 'env_cloud',
        branch: 'claude/b',
        model: 'claude-opus-4',
      },
    );
    assert.deepEqual(
      completed.events.map((e) => [e.data.type, (e.data as { session_id?: unknown }).session_id]),
      [
        ['control_request', undefined],
        ['user', ''],
      ],
    );
    const named = completeLaunchRequest(
      { title: 't', events: [{ type: 'event', data: userMessageEvent('p', { session_id: 'session_1' }) }] },
      { repository, environmentId: 'e', model: 'm' },
    );
    assert.equal((named.events[0]!.data as { session_id?: unknown }).session_id, 'session_1');
  });

  it('a detached revision is sent as is; no revision means the default branch', () => {
    const noRevision = buildLaunchRequest({
      prompt: 'p',
      repository: { ...repository, revision: undefined },
      environmentId: 'e',
      branch: 'claude/b',
    });
    assert.deepEqual(noRevision.session_context?.sources, [{ type: 'git_repository', url: 'https://github.com/acme/widgets' }]);
  });
});

type Scenario = 'approve' | 'question' | 'revise';

describe('claude-web backend through the real server (strict Claude-compatibility server)', function () {
  this.timeout(60_000);
  const servers = new Map<Scenario, { server: ServerProcess; proxy: ClaudeCompatProxy }>();
  let home: ClaudeHome;
  let repo: string;
  let backend: ClaudeWebBackend | undefined;
  let rig: { server: ServerProcess; proxy: ClaudeCompatProxy };
  const logLines: string[] = [];

  before(async () => {
    for (const name of ['approve', 'question', 'revise'] as const) {
      const server = await startServer({ scenario: join(EXAMPLES_DIR, `${name}.json`) });
      const proxy = await startClaudeCompatProxy({
        upstreamUrl: server.url,
        upstreamToken: server.token,
        validTokens: ['token-valid'],
        organizationUuid: ORG,
        repos: { 'acme/widgets': { app: 'installed' } },
      });
      servers.set(name, { server, proxy });
    }
  });
  after(async () => {
    for (const { server, proxy } of servers.values()) {
      await proxy.close();
      await server.stop();
    }
  });

  beforeEach(async () => {
    for (const { proxy } of servers.values()) {
      proxy.requests.length = 0;
      proxy.uuids.length = 0;
      Object.assign(proxy.settings, {
        validTokens: new Set(['token-valid']),
        v1Create: 'retired',
        archiveConflicts: 0,
        stream: 'serve',
        refuseDecisions: false,
        remoteSessionsAllowed: true,
      });
    }
    home = await makeClaudeHome({ accessToken: 'token-valid' }, ORG);
    repo = await makeGitRepo('https://github.com/acme/widgets.git');
    logLines.length = 0;
  });
  afterEach(async () => {
    await backend?.dispose();
    backend = undefined;
    await home.remove();
    await rm(repo, { recursive: true, force: true });
  });

  async function open(scenario: Scenario = 'approve', extra: Partial<ClaudeWebBackendOptions> = {}): Promise<ClaudeWebBackend> {
    rig = servers.get(scenario)!;
    const created = await createClaudeWebBackend({
      env: home.env,
      homeDir: home.homeDir,
      platform: 'linux',
      baseUrl: rig.proxy.url,
      workspaceFolder: repo,
      log: (line) => logLines.push(line),
      archiveRetryMs: [20, 40],
      stream: { initialBackoffMs: 20, maxBackoffMs: 100 },
      ...extra,
    });
    backend = created.backend;
    return backend;
  }

  /** What the extension sends without knowing the backend: a title and the two events. */
  function genericRequest(prompt: string): CreateSessionRequest {
    return {
      title: 'Add a changelog',
      events: [
        { type: 'event', data: setPlanModeEvent('set-mode-test') },
        { type: 'event', data: userMessageEvent(prompt) },
      ],
    };
  }

  /** Follows the session until `want`; returns the pending plan when the phase is plan_ready. */
  async function followUntilPhase(
    b: ClaudeWebBackend,
    sessionId: string,
    want: 'plan_ready' | 'needs_input',
    cursor?: { initialCursor: string | null },
  ): Promise<PendingPlan | null> {
    const reached = new AbortController();
    let pending: PendingPlan | null = null;
    await pollForApprovedPlan({
      sessionId,
      transport: b.transport,
      ...FAST,
      ...(cursor ?? {}),
      signal: reached.signal,
      ...watchPhases((phase, detail) => {
        if (phase !== want) return;
        if (want === 'plan_ready' && !detail.pendingPlan?.plan) return;
        pending = detail.pendingPlan ?? null;
        reached.abort();
      }),
    }).catch((err: unknown) => {
      if (!(err instanceof UltraplanPollError && err.reason === 'stopped')) throw err;
    });
    assert.ok(reached.signal.aborted, `the session never reached ${want}`);
    return pending;
  }

  async function launchAndWaitForPlan(b: ClaudeWebBackend): Promise<{ sessionId: string; pending: PendingPlan }> {
    const session = await b.createSession(genericRequest('Add a changelog'));
    const pending = await followUntilPhase(b, session.id, 'plan_ready');
    assert.ok(pending);
    return { sessionId: session.id, pending };
  }

  function decide(b: ClaudeWebBackend, sessionId: string, pending: PendingPlan, behavior: 'allow' | 'teleport' | 'deny', text?: string) {
    assert.ok(pending.requestId, 'the pending plan has no control_request id');
    const plan = pending.plan ?? '';
    const decision =
      behavior === 'allow'
        ? { behavior: 'allow' as const, updatedInput: { plan: text ?? plan } }
        : { behavior: 'deny' as const, message: behavior === 'teleport' ? teleportDenyMessage(plan) : (text ?? 'no') };
    return b.sendEvents(sessionId, [controlResponseEvent(pending.requestId, decision)]);
  }

  it('launch: the older create answers sessions_v1_retired, the one repeat on /v1/code/sessions carries what Claude Code sends', async () => {
    const b = await open();
    assert.equal(b.kind, 'claude-web');
    assert.equal(b.lifecycle.archiveOnApprove, false);
    assert.match(b.label, /Claude Code on the web · acme\/widgets · Default/);
    const session = await b.createSession(genericRequest('Add a changelog'));
    const creates = rig.proxy.requests.filter((r) => r.method === 'POST' && (r.path === '/v1/sessions' || r.path === '/v1/code/sessions'));
    assert.deepEqual(
      creates.map((r) => `${r.path} ${r.status}`),
      ['/v1/sessions 400', '/v1/code/sessions 200'],
    );
    const [old, current] = creates as [RecordedRequest, RecordedRequest];
    assert.equal(old.headers['anthropic-beta'], 'ccr-byoc-2025-07-29', 'the beta header only on the older create');
    assert.equal(current.headers['anthropic-beta'], undefined);
    for (const r of creates) {
      assert.equal(r.token, 'token-valid');
      assert.equal(r.headers['anthropic-version'], '2023-06-01');
      assert.equal(r.headers['anthropic-client-platform'], CLIENT_PLATFORM);
      assert.equal(r.headers['user-agent'], DEFAULT_USER_AGENT);
      assert.equal(r.headers['x-organization-uuid'], ORG);
    }
    const body = current.body as {
      title: string;
      environment_id: string;
      events: Array<{ payload: Record<string, unknown> }>;
      config: { sources: unknown; outcomes: Array<{ git_info: { branches: string[] } }>; model: string };
    };
    assert.equal(body.title, 'ultraplan: Add a changelog');
    assert.equal(body.environment_id, 'env_cloud_default');
    assert.equal(body.config.model, DEFAULT_CLOUD_MODEL);
    assert.deepEqual(body.config.sources, [{ type: 'git_repository', url: 'https://github.com/acme/widgets', revision: 'main' }]);
    assert.match(body.config.outcomes[0]!.git_info.branches[0]!, /^claude\/add-a-changelog-[0-9a-f]{5}$/);
    assert.deepEqual(body.events[0]!.payload.request, { subtype: 'set_permission_mode', mode: 'plan', ultraplan: true });
    assert.equal(new Set(body.events.map((e) => e.payload.uuid)).size, 2, 'each create event has its own uuid');
    // Ids: the wire says cse_X; links say session_X.
    assert.match(session.id, /^cse_/);
    assert.equal(b.sessionLink(session.id), `https://claude.ai/code/session_${session.id.slice(4)}`);
    assert.match(logLines.join('\n'), /sessions_v1_retired; repeating the create on \/v1\/code\/sessions/);
    // Only the create carries the organization.
    await b.getSession(session.id);
    assert.equal(rig.proxy.requests.at(-1)?.headers['x-organization-uuid'], undefined);
  });

  it('launch: where the older create is still answered, it is the only create', async () => {
    const b = await open();
    rig.proxy.settings.v1Create = 'accept';
    const session = await b.createSession(genericRequest('Add a changelog'));
    assert.match(session.id, /^session_/);
    assert.deepEqual(
      rig.proxy.requests.filter((r) => r.method === 'POST' && r.path.endsWith('sessions')).map((r) => r.path),
      ['/v1/sessions'],
    );
    // Every later call is on the current wire, with the cse_ id.
    const pending = await followUntilPhase(b, session.id, 'plan_ready');
    assert.ok(pending?.plan);
    const sessionCalls = rig.proxy.requests.filter((r) => r.path.includes('sessions')).slice(1);
    assert.ok(
      sessionCalls.length > 0 &&
        sessionCalls.every((r) => r.path.startsWith(`/v1/code/sessions/cse_${session.id.slice('session_'.length)}`)),
    );
  });

  /** One poll that answers the question at needs_input and ends at the plan, as the panel would. */
  async function answerThenPlan(b: ClaudeWebBackend, sessionId: string): Promise<PendingPlan> {
    const reached = new AbortController();
    let pending: PendingPlan | null = null;
    let answered = false;
    const failures: unknown[] = [];
    await pollForApprovedPlan({
      sessionId,
      transport: b.transport,
      ...FAST,
      signal: reached.signal,
      ...watchPhases((phase, detail) => {
        if (phase === 'needs_input' && !answered) {
          answered = true;
          // With a stream, reply once it is open (its headers came), so what follows the reply has a
          // stream to come by (on a busy machine the 50 ms reads would otherwise fetch it all first),
          // or once the backend has given up on it for the poll.
          const streaming = b.http.streamingTransport;
          const streamSettled = (): boolean => ['open', 'polling'].includes(streaming?.streamStats(sessionId)?.mode ?? '');
          void (streaming ? waitFor(streamSettled, 'the event stream to open or be given up') : Promise.resolve())
            .then(() => b.sendEvents(sessionId, [userMessageEvent('Node 20, please.')]))
            .catch((err: unknown) => failures.push(err));
        }
        if (phase === 'plan_ready' && detail.pendingPlan?.plan) {
          pending = detail.pendingPlan;
          reached.abort();
        }
      }),
    }).catch((err: unknown) => {
      if (!(err instanceof UltraplanPollError && err.reason === 'stopped')) throw err;
    });
    assert.deepEqual(failures, []);
    assert.ok(pending, 'the plan never became ready');
    return pending;
  }

  for (const mode of ['stream', 'poll'] as const) {
    it(`reply and plan over the ${mode === 'stream' ? 'live stream' : '3 s poll (no stream)'}: the events after the reply reach the phase`, async () => {
      const b = await open('question', { preferStream: mode === 'stream' });
      const session = await b.createSession(genericRequest('Change the build target'));
      const pending = await answerThenPlan(b, session.id);
      assert.match(pending.plan ?? '', /Target Node 20/);
      const streams = rig.proxy.requests.filter((r) => r.path.endsWith('/events/stream'));
      if (mode === 'stream') {
        assert.ok(
          streams.length >= 1 && streams.every((r) => r.status === 200),
          `followed on the stream: ${JSON.stringify(streams.map((r) => r.status))}`,
        );
        const stats = b.http.streamingTransport?.streamStats(session.id);
        assert.ok(stats && stats.readsFromStream >= 1, `events were read from the stream: ${JSON.stringify(stats)}`);
        assert.equal(stats.mode, 'idle', 'the stream closed with the poll');
      } else {
        assert.equal(streams.length, 0);
      }
      const reads = rig.proxy.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/events'));
      assert.ok(reads.length > 0 && reads.every((r) => r.query.sort_order === 'asc'));
      assert.equal(reads[0]!.query.cursor, undefined, 'no cursor on the first read');
    });
  }

  it('a service without the stream: the backend falls back to the poll and still gets the plan', async () => {
    const b = await open('question');
    rig.proxy.settings.stream = 'absent';
    const session = await b.createSession(genericRequest('Change the build target'));
    assert.match((await answerThenPlan(b, session.id)).plan ?? '', /Target Node 20/);
    assert.deepEqual(
      rig.proxy.requests.filter((r) => r.path.endsWith('/events/stream')).map((r) => r.status),
      [404],
      'asked once, then polled',
    );
  });

  it('approve: the approval carries updatedInput.plan, the remote executes, the session is not archived; the login is never written', async () => {
    const before = await home.snapshot();
    const b = await open();
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    await decide(b, sessionId, pending, 'allow');
    const sent = rig.proxy.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/events')).at(-1)!;
    const payload = (
      sent.body as { events: Array<{ payload: { uuid: string; response: { response: { updatedInput: { plan: string } } } } }> }
    ).events[0]!.payload;
    assert.equal(payload.response.response.updatedInput.plan, pending.plan);
    assert.match(payload.uuid, /^[0-9a-f-]{36}$/);
    const approved = await pollForApprovedPlan({ sessionId, transport: b.transport, ...FAST });
    assert.equal(approved.executionTarget, 'remote');
    assert.match(approved.plan, /Add a CHANGELOG\.md/);
    const result = await followUntilResult({
      sessionId,
      transport: b.transport,
      ...FAST,
      initialCursor: approved.cursor,
      scanner: approved.scanner,
    });
    assert.equal(result.subtype, 'success');
    assert.notEqual((await b.getSession(sessionId)).session_status, 'archived');
    assert.equal(
      rig.proxy.requests.some((r) => r.path.endsWith('/archive')),
      false,
    );
    assert.ok(rig.proxy.uuids.length >= 3 && new Set(rig.proxy.uuids).size === rig.proxy.uuids.length, 'every event sent had a fresh uuid');
    const raw = await fetch(`${rig.server.url}/v1/code/sessions/${sessionId}/events?sort_order=asc`, {
      headers: rig.server.headers(),
    }).then((r) => r.text());
    assert.ok(raw.includes(JSON.stringify(APPROVED_PLAN_MARKER).slice(1, -1)), 'the tool_result carries the approval marker');
    await assertUntouched(home, before);
    assert.doesNotMatch(logLines.join('\n'), /token-valid|refresh-secret/, 'a token reached the log');
  });

  it('edited approve: the edited plan is what the remote approves', async () => {
    const b = await open();
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    const edited = `${pending.plan}\n4. Also link it from the README.`;
    await decide(b, sessionId, pending, 'allow', edited);
    const approved = await pollForApprovedPlan({ sessionId, transport: b.transport, ...FAST });
    assert.equal(approved.executionTarget, 'remote');
    assert.match(approved.plan, /Also link it from the README/);
    const raw = await fetch(`${rig.server.url}/v1/code/sessions/${sessionId}/events?sort_order=asc`, {
      headers: rig.server.headers(),
    }).then((r) => r.text());
    assert.ok(raw.includes(JSON.stringify(APPROVED_PLAN_EDITED_MARKER).slice(1, -1)), 'the tool_result carries the edited marker');
  });

  it('an approval without updatedInput.plan is refused by the strict server, naming the field', async () => {
    const b = await open();
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    const response = await fetch(`${rig.proxy.url}/v1/code/sessions/${sessionId}/events`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer token-valid',
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-client-platform': CLIENT_PLATFORM,
        'user-agent': DEFAULT_USER_AGENT,
      },
      body: JSON.stringify({
        events: [{ payload: { uuid: 'u-1', ...controlResponseEvent(pending.requestId!, { behavior: 'allow', updatedInput: {} }) } }],
      }),
    });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /updatedInput\.plan/);
  });

  it('teleport: the plan comes back for local execution and the session is archived', async () => {
    const b = await open();
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    await decide(b, sessionId, pending, 'teleport');
    const teleported = await pollForApprovedPlan({ sessionId, transport: b.transport, ...FAST });
    assert.equal(teleported.executionTarget, 'local');
    assert.match(teleported.plan, /Add a CHANGELOG\.md/);
    assert.equal(b.lifecycle.archiveOnTeleport, true);
    await b.archive(sessionId);
    assert.equal((await b.getSession(sessionId)).session_status, 'archived');
    const archive = rig.proxy.requests.find((r) => r.path.endsWith('/archive'))!;
    assert.deepEqual(archive.body, {});
  });

  it('409 on archive: repeated after the waits and then done; three in a row are a failure', async () => {
    const b = await open();
    const session = await b.createSession(genericRequest('Add a changelog'));
    rig.proxy.settings.archiveConflicts = 2;
    await b.archive(session.id);
    assert.deepEqual(
      rig.proxy.requests.filter((r) => r.path.endsWith('/archive')).map((r) => r.status),
      [409, 409, 200],
    );
    assert.equal((await b.getSession(session.id)).session_status, 'archived');
    const second = await b.createSession(genericRequest('Add a changelog'));
    rig.proxy.settings.archiveConflicts = 3;
    await assert.rejects(b.archive(second.id), (err: unknown) => err instanceof SessionsError && err.kind === 'conflict');
  });

  it('reply: a clarifying question is needs_input; the answer goes as a user message and the plan follows', async () => {
    const b = await open('question');
    const session = await b.createSession(genericRequest('Change the build target'));
    await followUntilPhase(b, session.id, 'needs_input');
    await b.sendEvents(session.id, [userMessageEvent('Node 20, please.')]);
    const pending = await followUntilPhase(b, session.id, 'plan_ready');
    assert.match(pending?.plan ?? '', /Target Node 20/);
    const reply = rig.proxy.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/events')).at(-1)!;
    const payload = (reply.body as { events: Array<{ payload: { type: string; uuid: string; message: { content: string } } }> }).events[0]!
      .payload;
    assert.equal(payload.type, 'user');
    assert.equal(payload.message.content, 'Node 20, please.');
    assert.match(payload.uuid, /^[0-9a-f-]{36}$/);
  });

  it('reject with comments: the feedback reaches the agent, which revises; the revision is approved', async () => {
    const b = await open('revise');
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    assert.match(pending.plan ?? '', /Plan v1/);
    await decide(b, sessionId, pending, 'deny', 'Line 3: do not rewrite the parser; fix the tokenizer instead.');
    let revised: PendingPlan | null = null;
    const seen = new AbortController();
    const approvedRun = pollForApprovedPlan({
      sessionId,
      transport: b.transport,
      ...FAST,
      ...watchPhases((phase, detail) => {
        if (phase === 'plan_ready' && /Plan v2/.test(detail.pendingPlan?.plan ?? '') && !seen.signal.aborted) {
          seen.abort();
          revised = detail.pendingPlan ?? null;
          void decide(b, sessionId, revised!, 'allow');
        }
      }),
    });
    const approved = await approvedRun;
    assert.equal(approved.rejectCount, 1);
    assert.match(approved.plan, /Plan v2/);
    const raw = await fetch(`${rig.server.url}/v1/code/sessions/${sessionId}/events?sort_order=asc`, {
      headers: rig.server.headers(),
    }).then((r) => r.text());
    assert.ok(raw.includes('fix the tokenizer instead'), 'the comment is in the tool_result');
  });

  it('a decision the service refuses: decision_not_delivered with the browser link, and the plan stays pending', async () => {
    assert.deepEqual([...DECISION_REFUSAL_STATUSES].sort(), [400, 404, 405, 415, 422]);
    const b = await open();
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    rig.proxy.settings.refuseDecisions = 422;
    await assert.rejects(decide(b, sessionId, pending, 'allow'), (err: unknown) => {
      assert.ok(err instanceof ClaudeWebError, String(err));
      assert.equal(err.reason, 'decision_not_delivered');
      assert.equal(err.remedy, 'review_in_browser');
      assert.equal(err.url, `https://claude.ai/code/session_${sessionId.slice(4)}`);
      assert.match(err.message, /^Your decision was NOT sent: .*HTTP 422.*Review this plan in the browser/);
      return true;
    });
    assert.ok(await followUntilPhase(b, sessionId, 'plan_ready'), 'still pending');
  });

  it('a decision for a session that does not exist is not_found', async () => {
    const b = await open();
    await assert.rejects(
      b.sendEvents('cse_nosuchsession', [controlResponseEvent('req-1', { behavior: 'deny', message: 'no' })]),
      (err: unknown) => err instanceof SessionsError && err.kind === 'not_found',
    );
  });

  it('expired login: a token the service stops accepting fails the poll as unauthorized with the run-claude fix', async () => {
    const b = await open();
    const session = await b.createSession(genericRequest('Add a changelog'));
    rig.proxy.settings.validTokens = new Set();
    const caught = await pollForApprovedPlan({ sessionId: session.id, transport: b.transport, ...FAST }).catch((err: unknown) => err);
    assert.ok(caught instanceof UltraplanPollError, String(caught));
    assert.equal(caught.reason, 'unauthorized');
    assert.equal(claudeWebFailureOf(caught)?.reason, 'token_refused');
  });

  it('expired login on disk mid-session: token_expired, no request sent with it; the refreshed login is picked up', async () => {
    const b = await open();
    const session = await b.createSession(genericRequest('Add a changelog'));
    await home.writeCredentials({ accessToken: 'token-valid', expiresAt: Date.now() - 60_000 });
    const sent = rig.proxy.requests.length;
    await assert.rejects(b.transport.getStatus(session.id), (err: unknown) => {
      assert.ok(err instanceof SessionsError && err.kind === 'unauthorized', String(err));
      assert.equal(claudeWebFailureOf(err)?.reason, 'token_expired');
      return true;
    });
    assert.equal(rig.proxy.requests.length, sent);
    rig.proxy.settings.validTokens.add('token-refreshed');
    await home.writeCredentials({ accessToken: 'token-refreshed' });
    assert.ok(await b.transport.getStatus(session.id));
    assert.equal(rig.proxy.requests.at(-1)?.token, 'token-refreshed');
  });

  it('re-attach after a reload checks only the login and the organization', async () => {
    const b = await open();
    const session = await b.createSession(genericRequest('Add a changelog'));
    rig.proxy.requests.length = 0;
    const attached = await attachClaudeWebBackend({
      env: home.env,
      homeDir: home.homeDir,
      platform: 'linux',
      baseUrl: rig.proxy.url,
      workspaceFolder: '/nonexistent',
      log: () => {},
    });
    try {
      assert.equal(rig.proxy.requests.length, 0, 'no policy, environment or GitHub call (the organization came from .claude.json)');
      assert.ok(await followUntilPhase(attached, session.id, 'plan_ready'));
      assert.throws(() => attached.launchRequest('x'), /follow existing sessions/);
    } finally {
      await attached.dispose();
    }
  });

  it("the strict server refuses what today's client never sends", async () => {
    const b = await open();
    const session = await b.createSession(genericRequest('Add a changelog'));
    const headers = {
      authorization: 'Bearer token-valid',
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-client-platform': CLIENT_PLATFORM,
      'user-agent': DEFAULT_USER_AGENT,
    };
    const get = (path: string, h: Record<string, string> = headers) =>
      fetch(rig.proxy.url + path, { headers: h }).then(async (r) => ({ status: r.status, text: await r.text() }));
    const legacy = await get(`/v1/sessions/session_${session.id.slice(4)}/events`);
    assert.equal(legacy.status, 400);
    assert.match(legacy.text, /sessions_v1_retired/);
    const { 'anthropic-client-platform': _platform, ...noPlatform } = headers;
    assert.match((await get(`/v1/code/sessions/${session.id}`, noPlatform)).text, /missing header anthropic-client-platform/);
    assert.match((await get(`/v1/code/sessions/${session.id}`, { ...headers, 'user-agent': 'node' })).text, /missing header user-agent/);
    assert.match(
      (await get(`/v1/code/sessions/${session.id}`, { ...headers, 'anthropic-beta': 'ccr-byoc-2025-07-29' })).text,
      /unexpected header anthropic-beta/,
    );
    assert.match(
      (await get(`/v1/code/sessions/${session.id}`, { ...headers, 'x-organization-uuid': ORG })).text,
      /unexpected header x-organization-uuid/,
    );
    assert.match((await get(`/v1/code/sessions/${session.id}/events`)).text, /sort_order=asc/);
    assert.match((await get(`/v1/code/sessions/${session.id}/events?sort_order=asc&limit=5`)).text, /unexpected query parameter limit/);
  });
});
