// The claude-web backend end to end: the real session server (a child process with the scripted
// agent) behind the strict Claude-compatibility proxy, followed by the real poller. Launch shape,
// approve (remote executes, not archived), teleport (archived), the WebSocket decision fallback,
// neither path working, and a login that goes bad mid-session.
import { strict as assert } from 'node:assert';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SessionsError, UltraplanPollError } from '../../src/core/errors';
import { followUntilResult, pollForApprovedPlan } from '../../src/core/poller';
import {
  APPROVED_PLAN_MARKER,
  controlResponseEvent,
  setPlanModeEvent,
  teleportDenyMessage,
  userMessageEvent,
  type CreateSessionRequest,
} from '../../src/core/protocol';
import type { PendingPlan } from '../../src/core/scanner';
import { claudeWebFailureOf, createClaudeWebBackend, DECISION_REFUSAL_STATUSES, type ClaudeWebBackend } from '../../src/sessions/claudeWeb/backend';
import { ClaudeWebError } from '../../src/sessions/claudeWeb/errors';
import { buildLaunchRequest, outcomeBranch, ultraplanTitle } from '../../src/sessions/claudeWeb/launch';
import { startClaudeCompatProxy, type ClaudeCompatProxy } from '../support/claudeCompatProxy';
import { assertUntouched, makeClaudeHome, makeGitRepo, type ClaudeHome } from '../support/claudeCompatFixtures';
import { EXAMPLES_DIR, startServer, type ServerProcess } from '../support/serverProcess';

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
        { type: 'event', data: { type: 'control_request', request_id: 'set-mode-1', request: { subtype: 'set_permission_mode', mode: 'plan', ultraplan: true } } },
        { type: 'event', data: { type: 'user', parent_tool_use_id: null, message: { role: 'user', content: 'Add a changelog\nand link it from the README' } } },
      ],
      session_context: {
        sources: [{ type: 'git_repository', url: 'https://github.com/acme/widgets', revision: 'main' }],
        outcomes: [{ type: 'git_repository', git_info: { type: 'github', repo: 'acme/widgets', branches: ['claude/add-a-changelog-abcde'] } }],
      },
      environment_id: 'env_cloud',
    });
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

  it('a detached revision is sent as is; no revision means the default branch', () => {
    const noRevision = buildLaunchRequest({ prompt: 'p', repository: { ...repository, revision: undefined }, environmentId: 'e', branch: 'claude/b' });
    assert.deepEqual(noRevision.session_context?.sources, [{ type: 'git_repository', url: 'https://github.com/acme/widgets' }]);
  });
});

describe('claude-web backend through the real server (strict Claude-compatibility proxy)', function () {
  this.timeout(60_000);
  let server: ServerProcess;
  let proxy: ClaudeCompatProxy;
  let home: ClaudeHome;
  let repo: string;
  let backend: ClaudeWebBackend | undefined;
  const logLines: string[] = [];

  before(async () => {
    server = await startServer({ scenario: join(EXAMPLES_DIR, 'approve.json') });
    proxy = await startClaudeCompatProxy({
      upstreamUrl: server.url,
      upstreamToken: server.token,
      validTokens: ['token-valid'],
      organizationUuid: ORG,
      repos: { 'acme/widgets': { appInstalled: true } },
    });
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
  });

  beforeEach(async () => {
    proxy.requests.length = 0;
    proxy.socketFrames.length = 0;
    proxy.settings.validTokens = new Set(['token-valid']);
    proxy.settings.refuseControlResponseOverHttp = false;
    proxy.settings.webSocket = 'accept';
    proxy.settings.policyDisablesRemoteSessions = false;
    home = await makeClaudeHome({ accessToken: 'token-valid' }, ORG);
    repo = await makeGitRepo('https://github.com/acme/widgets.git');
    logLines.length = 0;
    const created = await createClaudeWebBackend({
      env: home.env,
      homeDir: home.homeDir,
      platform: 'linux',
      baseUrl: proxy.url,
      workspaceFolder: repo,
      log: (line) => logLines.push(line),
      socket: { connectTimeoutMs: 5000, confirmWindowMs: 1000 },
    });
    backend = created.backend;
  });
  afterEach(async () => {
    await backend?.dispose();
    backend = undefined;
    await home.remove();
    await rm(repo, { recursive: true, force: true });
  });

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

  async function launchAndWaitForPlan(b: ClaudeWebBackend): Promise<{ sessionId: string; pending: PendingPlan }> {
    const session = await b.createSession(genericRequest('Add a changelog'));
    const planReady = new AbortController();
    let pending: PendingPlan | null = null;
    await pollForApprovedPlan({
      sessionId: session.id,
      transport: b.transport,
      ...FAST,
      signal: planReady.signal,
      onPhase: (phase, detail) => {
        if (phase === 'plan_ready' && detail.pendingPlan?.plan) {
          pending = detail.pendingPlan;
          planReady.abort();
        }
      },
    }).catch((err: unknown) => {
      if (!(err instanceof UltraplanPollError && err.reason === 'stopped')) throw err;
    });
    assert.ok(pending, 'the plan never became ready');
    return { sessionId: session.id, pending };
  }

  function decide(b: ClaudeWebBackend, sessionId: string, pending: PendingPlan, behavior: 'allow' | 'teleport') {
    assert.ok(pending.requestId, 'the pending plan has no control_request id');
    const plan = pending.plan ?? '';
    const decision = behavior === 'allow' ? { behavior: 'allow' as const, updatedInput: { plan } } : { behavior: 'deny' as const, message: teleportDenyMessage(plan) };
    return b.sendEvents(sessionId, [controlResponseEvent(pending.requestId, decision)]);
  }

  it('launches with the Claude Code request: headers, organization, title, source, outcome, environment', async () => {
    const b = backend!;
    assert.equal(b.kind, 'claude-web');
    assert.equal(b.lifecycle.archiveOnApprove, false);
    assert.match(b.label, /Claude Code on the web · acme\/widgets · Default/);
    const session = await b.createSession(genericRequest('Add a changelog'));
    const create = proxy.requests.find((r) => r.method === 'POST' && r.path === '/v1/sessions');
    assert.ok(create);
    assert.ok(create.status >= 200 && create.status < 300, `creation answered ${create.status}`);
    assert.equal(create.token, 'token-valid');
    assert.equal(create.headers['anthropic-version'], '2023-06-01');
    assert.equal(create.headers['anthropic-beta'], 'ccr-byoc-2025-07-29');
    assert.equal(create.headers['x-organization-uuid'], ORG);
    const body = create.body as CreateSessionRequest & { session_context: { outcomes: Array<{ git_info: { branches: string[] } }> } };
    assert.equal(body.title, 'ultraplan: Add a changelog');
    assert.equal(body.environment_id, 'env_cloud_default');
    assert.deepEqual(body.session_context.sources, [{ type: 'git_repository', url: 'https://github.com/acme/widgets', revision: 'main' }]);
    assert.match(body.session_context.outcomes[0]!.git_info.branches[0]!, /^claude\/add-a-changelog-[0-9a-f]{5}$/);
    assert.deepEqual((body.events[0]!.data as unknown as { request: unknown }).request, { subtype: 'set_permission_mode', mode: 'plan', ultraplan: true });
    assert.equal(b.sessionLink(session.id), `https://claude.ai/code/${session.id}`);
    assert.match(logLines.join('\n'), new RegExp(`session ${session.id} created · https://claude\\.ai/code/`));
    // The service has no SSE stream; the backend polls, as Claude Code does.
    assert.equal(proxy.requests.some((r) => r.path.endsWith('/events/stream')), false);
  });

  it('approve: the remote executes to its result and the session is not archived; the login is never written', async () => {
    const before = await home.snapshot();
    const b = backend!;
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    await decide(b, sessionId, pending, 'allow');
    const approved = await pollForApprovedPlan({ sessionId, transport: b.transport, ...FAST });
    assert.equal(approved.executionTarget, 'remote');
    assert.match(approved.plan, /Add a CHANGELOG\.md/);
    const result = await followUntilResult({ sessionId, transport: b.transport, ...FAST, initialCursor: approved.cursor, scanner: approved.scanner });
    assert.equal(result.subtype, 'success');
    // The extension honours the lifecycle: approve does not archive.
    if (b.lifecycle.archiveOnApprove) await b.archive(sessionId);
    const session = await b.getSession(sessionId);
    assert.notEqual(session.session_status, 'archived');
    assert.equal(proxy.requests.some((r) => r.path.endsWith('/archive')), false);
    // The tool_result the agent received carries the approval marker.
    const events = await fetch(`${server.url}/v1/sessions/${sessionId}/events`, { headers: server.headers() }).then((r) => r.json() as Promise<{ data: Array<{ type: string; message?: { content?: unknown } }> }>);
    assert.ok(JSON.stringify(events.data).includes(JSON.stringify(APPROVED_PLAN_MARKER).slice(1, -1)));
    await assertUntouched(home, before);
    assert.ok(logLines.length > 0);
    assert.doesNotMatch(logLines.join('\n'), /token-valid|refresh-secret/, 'a token reached the log');
  });

  it('teleport: the plan comes back for local execution and the session is archived', async () => {
    const b = backend!;
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    await decide(b, sessionId, pending, 'teleport');
    const teleported = await pollForApprovedPlan({ sessionId, transport: b.transport, ...FAST });
    assert.equal(teleported.executionTarget, 'local');
    assert.match(teleported.plan, /Add a CHANGELOG\.md/);
    assert.equal(b.lifecycle.archiveOnTeleport, true);
    await b.archive(sessionId);
    assert.equal((await b.getSession(sessionId)).session_status, 'archived');
    // Archiving twice counts as done (409 from the server).
    await b.archive(sessionId);
  });

  it('a decision refused over HTTP goes over the session WebSocket and is applied', async () => {
    proxy.settings.refuseControlResponseOverHttp = 405;
    const b = backend!;
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    await decide(b, sessionId, pending, 'allow');
    const refused = proxy.requests.find((r) => r.method === 'POST' && r.path.endsWith('/events'));
    assert.equal(refused?.status, 405);
    assert.equal(proxy.socketFrames.length, 1);
    assert.equal(proxy.socketFrames[0]!.sessionId, sessionId);
    assert.equal((proxy.socketFrames[0]!.frame as { type: string }).type, 'control_response');
    const approved = await pollForApprovedPlan({ sessionId, transport: b.transport, ...FAST });
    assert.equal(approved.executionTarget, 'remote');
    assert.match(logLines.join('\n'), /HTTP refused the decision .*\(HTTP 405\); sending it over the session WebSocket/);
    assert.match(logLines.join('\n'), /sent over the WebSocket \(echoed back\)/);
  });

  it('every refusal status in the list takes the WebSocket path (400 too)', async () => {
    assert.deepEqual([...DECISION_REFUSAL_STATUSES].sort(), [400, 404, 405, 415, 422, 501]);
    proxy.settings.refuseControlResponseOverHttp = 400;
    const b = backend!;
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    await decide(b, sessionId, pending, 'teleport');
    assert.equal((await pollForApprovedPlan({ sessionId, transport: b.transport, ...FAST })).executionTarget, 'local');
  });

  it('neither HTTP nor the WebSocket: a plain decision_not_delivered error, and nothing was decided', async () => {
    proxy.settings.refuseControlResponseOverHttp = 405;
    proxy.settings.webSocket = 'refuse';
    const b = backend!;
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    let caught: unknown;
    try {
      await decide(b, sessionId, pending, 'allow');
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof ClaudeWebError, String(caught));
    assert.equal(caught.reason, 'decision_not_delivered');
    assert.equal(caught.remedy, 'review_in_browser');
    assert.equal(caught.url, `https://claude.ai/code/${sessionId}`);
    assert.match(caught.message, /^Your decision was NOT sent: .*HTTP 405.*WebSocket was refused \(HTTP 404\).*Review this plan in the browser/);
    // The plan is still pending on the server: no tool_result for it.
    const stillPending = new AbortController();
    let phase = '';
    await pollForApprovedPlan({
      sessionId,
      transport: b.transport,
      ...FAST,
      signal: stillPending.signal,
      onPhase: (p) => {
        phase = p;
        stillPending.abort();
      },
    }).catch(() => undefined);
    assert.equal(phase, 'plan_ready');
  });

  it('a WebSocket that takes the frame but closes with an error is not counted as sent', async () => {
    proxy.settings.refuseControlResponseOverHttp = 405;
    const b = backend!;
    const { sessionId, pending } = await launchAndWaitForPlan(b);
    // Archived meanwhile (say, from the browser): the service refuses the decision behind the socket.
    await b.archive(sessionId);
    await assert.rejects(decide(b, sessionId, pending, 'allow'), (err: unknown) => {
      assert.ok(err instanceof ClaudeWebError, String(err));
      assert.equal(err.reason, 'decision_not_delivered');
      assert.match(err.message, /NOT sent.*WebSocket closed before taking the decision \(code 4409/);
      return true;
    });
    assert.equal(proxy.socketFrames.length, 1, 'the frame did reach the socket');
  });

  it('a user message refused over HTTP does not take the WebSocket path', async () => {
    const b = backend!;
    let caught: unknown;
    try {
      await b.sendEvents('no-such-session', [userMessageEvent('hello')]);
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof SessionsError && caught.kind === 'not_found', String(caught));
    assert.equal(proxy.socketFrames.length, 0);
  });

  it('a decision for a session that does not exist is not_found, not a WebSocket attempt', async () => {
    const b = backend!;
    await assert.rejects(
      b.sendEvents('no-such-session', [controlResponseEvent('req-1', { behavior: 'deny', message: 'no' })]),
      (err: unknown) => err instanceof SessionsError && err.kind === 'not_found',
    );
    assert.equal(proxy.socketFrames.length, 0);
  });

  it('a token the service stops accepting: the poll fails as unauthorized with the run-claude fix', async () => {
    const b = backend!;
    const session = await b.createSession(genericRequest('Add a changelog'));
    proxy.settings.validTokens = new Set();
    let caught: unknown;
    try {
      await pollForApprovedPlan({ sessionId: session.id, transport: b.transport, ...FAST });
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof UltraplanPollError, String(caught));
    assert.equal(caught.reason, 'unauthorized');
    const failure = claudeWebFailureOf(caught);
    assert.equal(failure?.reason, 'token_refused');
    assert.match(caught.cause instanceof Error ? caught.cause.message : '', /refused Claude Code's login \(HTTP 401.*Run `claude` once/);
  });

  it('a login that expires mid-session: unauthorized, token_expired, no request sent with it', async () => {
    const b = backend!;
    const session = await b.createSession(genericRequest('Add a changelog'));
    await home.writeCredentials({ accessToken: 'token-valid', expiresAt: Date.now() - 60_000 });
    const sent = proxy.requests.length;
    await assert.rejects(b.transport.getStatus(session.id), (err: unknown) => {
      assert.ok(err instanceof SessionsError && err.kind === 'unauthorized', String(err));
      assert.equal(claudeWebFailureOf(err)?.reason, 'token_expired');
      return true;
    });
    assert.equal(proxy.requests.length, sent);
    // Claude Code refreshes it; the next read picks the new token up without a new backend.
    proxy.settings.validTokens.add('token-refreshed');
    await home.writeCredentials({ accessToken: 'token-refreshed' });
    assert.ok(await b.transport.getStatus(session.id));
    assert.equal(proxy.requests.at(-1)?.token, 'token-refreshed');
  });

  it('the organization policy at session creation is reported as such', async () => {
    const b = backend!;
    proxy.settings.policyDisablesRemoteSessions = true;
    await assert.rejects(b.createSession(genericRequest('x')), (err: unknown) => {
      assert.equal(claudeWebFailureOf(err)?.reason, 'org_policy');
      assert.match((err as Error).message, /organization's policy disables/);
      return true;
    });
  });
});
