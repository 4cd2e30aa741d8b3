// The real Codex ACP adapter (@agentclientprotocol/codex-acp, pinned, installed by
// scripts/setup-agents.mjs) through the real SessionHost, InProcessBackend and poller, with only
// the model scripted: an OpenAI Responses API on 127.0.0.1 named in a throwaway CODEX_HOME.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { approvalWithNotesEvents, notesPrompt } from '../../src/core/approvalNotes';
import { pollForApprovedPlan } from '../../src/core/poller';
import { controlResponseEvent } from '../../src/core/protocol';
import { AcpAgent, CONTINUE_PLANNING_PROMPT } from '../../src/agents/acp/acpAgent';
import type { AcpAgentOptions } from '../../src/agents/acp/acpAgentOptions';
import { InProcessBackend } from '../../src/service/inProcessBackend';
import { CODEX_LOGIN_HINT } from '../../src/agents/quirks/codex';
import { SessionHost } from '../../src/service/host/sessionHost';
import { agentBin } from '../../scripts/agents-config.cjs';
import {
  inputItems,
  startScriptedResponses,
  toolOutput,
  userTexts,
  type ModelReply,
  type ScriptedResponsesApi,
  type Round,
} from '../support/modelApi/openaiResponses';
import { isAlive, processGroupMembers, waitGone } from '../support/processes';
import { allEvents, approveAsShown, createRequest, decideFirstPlan, replyThenApprove } from '../service/hostTestKit';
import { watchPhases } from '../support/pollPhases';
import { ORIGINAL_APP } from '../support/acpFixtures';
import { waitFor } from '../support/wait';

const FAST = { pollIntervalMs: 100, timeoutMs: Number(process.env.CODEX_POLL_MS ?? 120_000) };
const PLAN_1 = '# Add a greeting\n\n1. Export `greeting` from src/app.ts\n2. Test it';
const PLAN_2 = '# Add a greeting (v2)\n\n1. Export `greeting` from src/app.ts\n2. Handle an empty name\n3. Test it';
const IMPLEMENTED = 'export const greeting = "hello";\n';

const exec = (cmd: string, extra: Record<string, unknown> = {}, callId?: string): ModelReply => ({
  calls: [{ type: 'function', name: 'exec_command', arguments: { cmd, ...extra }, ...(callId ? { callId } : {}) }],
});
const proposedPlan = (plan: string): ModelReply => ({ text: `Here is the plan.\n\n<proposed_plan>\n${plan}\n</proposed_plan>` });

interface Run {
  workspace: string;
  root: string;
  api: ScriptedResponsesApi;
  host: SessionHost;
  backend: InProcessBackend;
  agents: AcpAgent[];
  log: string[];
}

describe('the real Codex ACP adapter, with only the model scripted', function () {
  this.timeout(180_000);
  let run: Run | undefined;
  const pids = new Set<number>();

  before(async function () {
    this.timeout(600_000);
    // Once per machine (cached); a clean machine installs it here with no manual step.
    const { setupAgents } = await import('../../scripts/setup-agents.mjs');
    await setupAgents(['codex']);
  });

  async function open(
    rounds: Round[],
    options: Partial<AcpAgentOptions> & { baseUrl?: string; apiKey?: string | null; brokenConfig?: boolean } = {},
  ): Promise<Run> {
    const root = await mkdtemp(path.join(tmpdir(), 'ultraplan-codex-'));
    const workspace = path.join(root, 'workspace');
    const codexHome = path.join(root, 'codex-home');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await mkdir(codexHome);
    await writeFile(path.join(workspace, 'README.md'), '# Demo project\n');
    await writeFile(path.join(workspace, 'src', 'app.ts'), ORIGINAL_APP);
    const api = await startScriptedResponses(rounds);
    // A provider of our own pointing at the scripted model; a known model slug, so Codex uses its
    // own metadata instead of warning about a fallback.
    await writeFile(
      path.join(codexHome, 'config.toml'),
      [
        'model = "gpt-6.1-terra"',
        'model_provider = "scripted"',
        '[model_providers.scripted]',
        'name = "Scripted model"',
        `base_url = "${options.baseUrl ?? api.baseUrl}"`,
        'wire_api = "responses"',
        'env_key = "OPENAI_API_KEY"',
        ...(options.baseUrl ? [] : ['request_max_retries = 0', 'stream_max_retries = 0']),
        ...(options.brokenConfig ? ['request_max_retries = = 0'] : []),
        '',
      ].join('\n'),
    );
    const env: Record<string, string> = { HOME: root, CODEX_HOME: codexHome, NO_BROWSER: '1' };
    for (const key of ['PATH', 'LANG', 'TMPDIR']) if (process.env[key]) env[key] = process.env[key] as string;
    if (options.apiKey !== null) env.OPENAI_API_KEY = options.apiKey ?? 'sk-scripted';
    const log: string[] = [];
    const agents: AcpAgent[] = [];
    const host = new SessionHost({
      agentFactory: () => {
        const agent = new AcpAgent({
          argv: [agentBin('codex')],
          cwd: workspace,
          env,
          inheritEnv: false,
          label: 'Codex (ACP)',
          stopGraceMs: 1000,
          log: (line) => log.push(line),
          ...options,
        });
        agents.push(agent);
        return agent;
      },
    });
    const backend = new InProcessBackend({ host, label: 'Embedded · Codex (ACP)' });
    run = { workspace, root, api, host, backend, agents, log };
    return run;
  }

  /** The shared wait, with the tail of the agent's log on timeout. */
  function waitWithLog<T>(
    what: string,
    check: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs = 60_000,
  ): Promise<T> {
    return waitFor(check, { message: what, timeoutMs, detail: () => run?.log.slice(-15).join('\n') ?? '' });
  }

  afterEach(async function () {
    if (!run) return;
    if (this.currentTest?.state === 'failed') {
      console.log(
        `agent log:\n${run.log.join('\n')}\nmodel requests: ${run.api.modelRequests().length}, rounds left: ${run.api.remainingRounds}`,
      );
      for (const request of run.api.modelRequests()) {
        const items = inputItems(request);
        console.log(`round ${request.round}: ${items.length} items, last: ${JSON.stringify(items.slice(-2)).slice(0, 400)}`);
      }
      for (const id of run.host.listSessions().map((session) => session.id)) {
        console.log(
          allEvents(run.host, id)
            .map((event) => JSON.stringify(event).slice(0, 300))
            .join('\n'),
        );
      }
    }
    const { backend, agents, api, root } = run;
    for (const agent of agents) if (agent.pid) pids.add(agent.pid);
    await backend.dispose();
    // The adapter starts `codex app-server` as its child, in its process group: none may be left.
    for (const pid of pids) {
      assert.ok(await waitGone(pid, 10_000), `the adapter ${pid} was left running`);
      await waitWithLog(`process group ${pid} to empty`, () => processGroupMembers(pid).length === 0, 10_000);
    }
    pids.clear();
    await api.close();
    await rm(root, { recursive: true, force: true });
    run = undefined;
  });

  it('plans read-only, refuses the write, nudges once, shows the real plan, revises on feedback, and implements after approval', async () => {
    let feedbackSeen: string[] = [];
    const { workspace, api, backend, host, agents, log } = await open(
      [
        // Reads work in the read-only preset.
        exec('cat README.md', {}, 'call_read'),
        // A plain write: the sandbox of the read-only preset stops it.
        exec('echo changed > src/app.ts', {}, 'call_sandboxed_write'),
        // A write asking to leave the sandbox: a permission request we refuse; Codex ends its turn.
        exec(
          'echo escalated > src/app.ts',
          { sandbox_permissions: 'require_escalated', justification: 'Edit the app' },
          'call_escalated_write',
        ),
        // After our one nudge to continue planning: the plan.
        proposedPlan(PLAN_1),
        (request) => {
          feedbackSeen = userTexts(request);
          return { text: `Revised.\n\n<proposed_plan>\n${PLAN_2}\n</proposed_plan>` };
        },
        // The implementation turn, in the preset the reviewer chose (workspace-write).
        exec(`printf 'export const greeting = "hello";\\n' > src/app.ts`, {}, 'call_implement'),
        { text: 'Done: src/app.ts exports greeting.' },
      ],
      { afterApproval: 'acceptEdits' },
    );
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const plans: string[] = [];
    let whilePlanning = '';
    const approved = await pollForApprovedPlan({
      sessionId: session.id,
      transport: backend.transport,
      ...FAST,
      ...watchPhases((phase, detail) => {
        if (phase !== 'plan_ready' || !detail.pendingPlan?.requestId) return;
        plans.push((detail.pendingPlan.plan ?? '').trim());
        if (plans.length === 1) whilePlanning = readFileSync(path.join(workspace, 'src', 'app.ts'), 'utf8');
        const decision =
          plans.length === 1
            ? ({ behavior: 'deny', message: 'Also handle an empty name.' } as const)
            : ({ behavior: 'allow', updatedInput: { plan: detail.pendingPlan.plan ?? '' } } as const);
        void backend.sendEvents(session.id, [controlResponseEvent(detail.pendingPlan.requestId, decision)]);
      }),
    });
    const agent = agents[0] as AcpAgent;

    // The real plan text, never a placeholder or a path; the feedback reached the model.
    assert.deepEqual(plans, [PLAN_1, PLAN_2]);
    assert.equal(approved.plan.trim(), PLAN_2);
    assert.equal(approved.rejectCount, 1);
    assert.ok(
      feedbackSeen.some((text) => text.includes('Also handle an empty name.')),
      `the model was sent: ${JSON.stringify(feedbackSeen)}`,
    );

    // Plan mode found: collaboration_mode = plan, with the read-only preset.
    const init = allEvents(host, session.id).find((event) => event.subtype === 'init') as unknown as {
      agent?: { mode?: string; version?: string };
    };
    assert.deepEqual([init.agent?.mode, init.agent?.version], ['plan', '2.6.0']);
    // While planning: the read went through, both writes failed, the workspace is untouched.
    assert.equal(whilePlanning, ORIGINAL_APP);
    const requests = api.modelRequests();
    assert.match(toolOutput(requests[1]!, 'call_read') ?? '', /# Demo project/);
    assert.match(toolOutput(requests[2]!, 'call_sandboxed_write') ?? '', /Read-only file system/);
    const events = allEvents(host, session.id).map((entry) => entry as unknown as Record<string, unknown>);
    const refusals = events.filter((event) => event.subtype === 'acp_refused').map((event) => String(event.message));
    assert.ok(
      refusals.some((message) => message.includes('echo escalated > src/app.ts')),
      `refusals: ${refusals.join(' | ')}`,
    );
    // The nudge, once, in the log and to the model.
    assert.equal(events.filter((event) => event.subtype === 'acp_continue_planning').length, 1);
    assert.ok(userTexts(requests[3]!).includes(CONTINUE_PLANNING_PROMPT));
    assert.ok(log.some((line) => line.includes('set the "read-only" preset while planning')));

    // After approval: the chosen preset, then Codex's own implementation turn, whose edit lands.
    await waitWithLog('the edit to land', async () => (await readFile(path.join(workspace, 'src', 'app.ts'), 'utf8')) === IMPLEMENTED);
    assert.equal(agent.sessionMode, 'workspace-write');
    const implementation = (await api.waitForModelRequests(6))[5];
    assert.ok(implementation && userTexts(implementation).some((text) => text.includes('Implement the approved plan.')));
  });

  it('approve with ultraplan.afterApproval = default: the read-only preset stays and each edit is asked of the person', async () => {
    const { workspace, backend, host, agents } = await open([
      proposedPlan(PLAN_1),
      exec(`printf 'export const greeting = "hello";\\n' > src/app.ts`, {
        sandbox_permissions: 'require_escalated',
        justification: 'Write src/app.ts',
      }),
      { text: 'Done.' },
    ]);
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    await decideFirstPlan(backend, session.id, FAST, approveAsShown);
    // The edit comes to the person as a permission request; they allow it; it lands.
    const request = await waitWithLog('the edit permission request', () =>
      allEvents(host, session.id)
        .map((entry) => entry as unknown as { type?: string; request_id?: string; request?: { subtype?: string; tool_name?: string } })
        .find(
          (event) =>
            event.type === 'control_request' && event.request?.subtype === 'can_use_tool' && event.request?.tool_name !== 'ExitPlanMode',
        ),
    );
    assert.equal((agents[0] as AcpAgent).sessionMode, 'read-only');
    assert.equal(await readFile(path.join(workspace, 'src', 'app.ts'), 'utf8'), ORIGINAL_APP);
    await backend.sendEvents(session.id, [controlResponseEvent(request.request_id as string, { behavior: 'allow', updatedInput: {} })]);
    await waitWithLog('the edit to land', async () => (await readFile(path.join(workspace, 'src', 'app.ts'), 'utf8')) === IMPLEMENTED);
  });

  it('approve with notes: Codex implements the plan in the approved turn, then takes the notes as its next prompt', async () => {
    const notes = 'Keep `greeting` a plain string.';
    const { backend, host } = await open([
      proposedPlan(PLAN_1),
      { text: 'Implemented.' },
      (request) => ({ text: userTexts(request).some((text) => text.includes(notes)) ? 'Noted.' : 'No notes reached me.' }),
    ]);
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    await pollForApprovedPlan({
      sessionId: session.id,
      transport: backend.transport,
      ...FAST,
      ...watchPhases((phase, detail) => {
        if (phase === 'plan_ready' && detail.pendingPlan?.requestId) {
          void backend.sendEvents(
            session.id,
            approvalWithNotesEvents('next_message', detail.pendingPlan.requestId, detail.pendingPlan.plan ?? '', notes),
          );
        }
      }),
    });
    const results = await waitWithLog('the notes turn to end', () => {
      const ended = allEvents(host, session.id).filter((event) => event.type === 'result');
      return ended.length >= 2 ? ended : undefined;
    });
    assert.deepEqual(
      results.map((event) => (event as { result?: string }).result),
      ['Implemented.', 'Noted.'],
    );
    // The model's record: the implementation's request had no notes; the next one is the notes prompt.
    const requests = run!.api.modelRequests();
    const withNotes = requests.map((request) => userTexts(request).some((text) => text.includes(notesPrompt(notes))));
    assert.deepEqual(withNotes, [false, false, true]);
  });

  it('a question: Codex asks, the person answers in the session, the answer reaches the model, then the plan', async () => {
    let answerSeen = '';
    const { backend } = await open([
      {
        calls: [
          {
            type: 'function',
            name: 'request_user_input',
            callId: 'call_question',
            arguments: {
              questions: [
                {
                  id: 'database',
                  header: 'Database',
                  question: 'Which database should the greeting use?',
                  options: [
                    { label: 'SQLite (Recommended)', description: 'A file, nothing to run.' },
                    { label: 'Postgres', description: 'A server.' },
                  ],
                },
              ],
            },
          },
        ],
      },
      (request) => {
        answerSeen = toolOutput(request, 'call_question') ?? '';
        return proposedPlan(PLAN_1);
      },
    ]);
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const { question } = await replyThenApprove(backend, session.id, 'Postgres', FAST);
    assert.match(
      question ?? '',
      /Codex needs your input to continue\.\n\nWhich database should the greeting use\?\n- SQLite \(Recommended\)\n- Postgres/,
    );
    assert.match(answerSeen, /Postgres/);
  });

  it('the model refusing the key (HTTP 401) ends the session at once, saying what to set', async () => {
    const { backend, host } = await open([{ httpError: 401, message: 'Incorrect API key provided: sk-scr***' }]);
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const result = await waitWithLog('the turn to end', () =>
      allEvents(host, session.id)
        .map((entry) => entry as unknown as { type?: string; is_error?: boolean; result?: string })
        .find((event) => event.type === 'result'),
    );
    assert.equal(result.is_error, true);
    assert.match(
      result.result ?? '',
      /^Codex \(ACP\) failed while planning: Authentication required\. Set CODEX_API_KEY or OPENAI_API_KEY/,
    );
    assert.ok((result.result ?? '').includes(CODEX_LOGIN_HINT));
  });

  it("the model's words show once each, streamed as the API streams them (the item starts empty)", async () => {
    const { backend, host } = await open([
      { text: 'Let me look.', calls: [{ type: 'function', name: 'exec_command', arguments: { cmd: 'cat README.md' } }] },
      { text: 'Only words here.' },
    ]);
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    await waitWithLog('the turn to end', () => allEvents(host, session.id).find((event) => event.type === 'result'));
    const texts = allEvents(host, session.id)
      .map((event) => event as unknown as { type?: string; message?: { content?: Array<{ type: string; text?: string }> } })
      .filter((event) => event.type === 'assistant')
      .flatMap((event) => (event.message?.content ?? []).filter((block) => block.type === 'text').map((block) => block.text));
    assert.deepEqual(texts, ['Let me look.', 'Only words here.']);
  });

  it("the model dropping its stream mid-answer (no retries configured): the turn ends with Codex's own message, no hang", async () => {
    const { backend, host } = await open([{ dropStream: true }]);
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const result = await waitWithLog('the turn to end', () =>
      allEvents(host, session.id)
        .map((entry) => entry as unknown as { type?: string; is_error?: boolean; result?: string })
        .find((event) => event.type === 'result'),
    );
    // Codex reports it as its message and ends the turn: the person reads the cause and can reply to retry.
    assert.match(result.result ?? '', /stream disconnected before completion/);
  });

  it('with no model reachable, a prompt that only gets "Reconnecting…" status ends within the bound with a clear message', async () => {
    // A port nothing listens on, with Codex's default retries: it reconnects for minutes.
    const { backend, host } = await open([], { baseUrl: 'http://127.0.0.1:9/v1', firstEventTimeoutMs: 15_000 });
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const started = Date.now();
    const result = await waitWithLog(
      'the session to fail',
      () =>
        allEvents(host, session.id)
          .map((entry) => entry as unknown as { type?: string; is_error?: boolean; result?: string })
          .find((event) => event.type === 'result' && event.is_error),
      90_000,
    );
    assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
    assert.match(result.result ?? '', /Codex \(ACP\) only reported "Reconnecting/);
    assert.match(result.result ?? '', /check the agent's login and network/);
  });

  it('without an API key: no authenticate, and the turn ends with Codex naming the missing key', async () => {
    const { backend, host, log } = await open([], { apiKey: null });
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const result = await waitWithLog('the turn to end', () =>
      allEvents(host, session.id)
        .map((entry) => entry as unknown as { type?: string; result?: string })
        .find((event) => event.type === 'result'),
    );
    assert.match(result.result ?? '', /Missing environment variable: `OPENAI_API_KEY`/);
    assert.ok(log.some((line) => line.includes('did not authenticate: neither CODEX_API_KEY nor OPENAI_API_KEY is set')));
  });

  it('a broken config.toml: the failure quotes Codex\'s cause, not a bare "Internal error"', async () => {
    const { backend, host } = await open([], { brokenConfig: true });
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const result = await waitWithLog('the session to fail', () =>
      allEvents(host, session.id)
        .map((entry) => entry as unknown as { type?: string; is_error?: boolean; result?: string })
        .find((event) => event.type === 'result' && event.is_error),
    );
    assert.match(
      result.result ?? '',
      /Codex \(ACP\) (refused session\/new|failed during authenticate): failed to reload config: .*config\.toml/,
    );
    assert.doesNotMatch((result.result ?? '').split('\n')[0] ?? '', /Internal error/);
  });

  it('the adapter crashing mid-turn ends the session with a clear message and leaves no process', async () => {
    const { backend, host, agents } = await open([
      () => {
        // The "model" is asked; meanwhile the adapter dies.
        const pid = (agents[0] as AcpAgent).pid as number;
        pids.add(pid);
        process.kill(pid, 'SIGKILL');
        return { text: 'too late' };
      },
    ]);
    const session = await backend.createSession(createRequest('Plan a greeting feature'));
    const result = await waitWithLog('the session to fail', () =>
      allEvents(host, session.id)
        .map((entry) => entry as unknown as { type?: string; is_error?: boolean; result?: string })
        .find((event) => event.type === 'result' && event.is_error),
    );
    assert.match(result.result ?? '', /Codex \(ACP\) was killed by SIGKILL unexpectedly/);
    const pid = (agents[0] as AcpAgent).pid as number;
    assert.ok(!isAlive(pid));
  });
});
