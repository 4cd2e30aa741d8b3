// Claude's real ACP adapter (and Claude Code under it) in the local session service as the
// extension starts it with ultraplan.localService.sandbox "auto": only its model is scripted, on
// 127.0.0.1, named by the window's ANTHROPIC_BASE_URL. It plans in a sandbox (its plan file in the
// session's own HOME under the service's folder, never the window's HOME; the workspace untouched),
// and Approve carries the plan out in a new, writable sandbox that loads its conversation. With no
// key in the environment it uses the person's saved login, the one file of HOME bound in.
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { controlResponseEvent } from '../../../src/core/protocol';
import type { AgentLaunch } from '../../../src/core/agentLaunch';
import { LocalService } from '../../../src/client/localService/localService';
import type { SessionsClient } from '../../../src/client/sessionsClient';
import { findBubblewrap } from '../../../src/core/node/bubblewrap';
import { anthropicApi } from '../../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../../support/modelApi/scenario';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanFile } from '../../support/realAgents';
import { ORIGINAL_APP, UPDATED_APP } from '../../support/acpFixtures';
import { waitFor } from '../../support/wait';
import { cleanUpServices, clientOf, createSession, launcherOptions, serviceDir } from './serviceKit';

type StoredEvent = Record<string, unknown> & { type?: string };
const PLAN = '# Flip the flag\n\n1. Set original to false in src/app.ts.\n';
const WAIT_MS = 120_000;

const isPlanRequest = (e: StoredEvent) =>
  e.type === 'control_request' && (e.request as { tool_name?: string } | undefined)?.tool_name === 'ExitPlanMode';

async function waitForEvent(client: SessionsClient, id: string, match: (e: StoredEvent) => boolean, what: string): Promise<StoredEvent> {
  return waitFor(async () => ((await client.readEvents(id, null)).events as StoredEvent[]).find(match), {
    message: what,
    timeoutMs: WAIT_MS,
  });
}

/** The service as a window with `env` starts it ("auto"), and the launch of Claude's adapter in `workspace`. */
async function sandboxedClaude(env: NodeJS.ProcessEnv, workspace: string) {
  const service = new LocalService(launcherOptions(serviceDir(), '1.0.0', { env, sandbox: { mode: 'auto', bwrap: findBubblewrap() } }));
  const connection = await service.connect();
  assert.deepEqual(connection.status.sandbox, { mode: 'auto', sandboxed: true });
  const launch: AgentLaunch = {
    kind: 'acp',
    argv: [CLAUDE_ADAPTER],
    cwd: workspace,
    label: 'Claude (ACP)',
    afterApproval: 'acceptEdits',
    outsideAccess: 'ask',
  };
  return { connection, client: clientOf(connection), launch };
}

describe("Claude's real adapter in the sandboxed local service (model scripted)", function () {
  this.timeout(240_000);
  let root = '';
  let model: ScriptedModelServer | undefined;

  before(function () {
    if (process.platform !== 'linux') this.skip();
  });
  afterEach(async () => {
    await cleanUpServices();
    await model?.close();
    model = undefined;
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('plans read-only in its own HOME, and Approve carries the plan out in a writable sandbox', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-sandboxed-claude-'));
    const workspace = path.join(root, 'workspace');
    const windowHome = path.join(root, 'window-home');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await mkdir(windowHome);
    const app = path.join(workspace, 'src', 'app.ts');
    await writeFile(app, ORIGINAL_APP);
    let planFile = '';
    model = new ScriptedModelServer(
      anthropicApi,
      new Scenario([
        (view) => {
          planFile = claudePlanFile(view);
          return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: PLAN } }] };
        },
        () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
        () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
        () => ({ toolCalls: [{ name: 'Write', input: { file_path: app, content: UPDATED_APP } }] }),
        () => ({ text: 'Done: flipped.' }),
      ]),
    );
    const url = await model.start();
    // The window's environment, as the extension starts the service with it.
    const env = { ...process.env, ...claudeEnv(windowHome, url) };
    const { connection, client, launch } = await sandboxedClaude(env, workspace);
    const id = await createSession(client, launch, 'Flip the flag in src/app.ts');
    const request = await waitForEvent(client, id, isPlanRequest, 'the plan');

    const sessionHome = path.join(connection.place.dataDir, 'sandboxes', id.replace(/^cse_/, 'session_'), 'home');
    assert.ok(planFile.startsWith(`${sessionHome}/`), `the plan file ${planFile} in the session's HOME ${sessionHome}`);
    assert.equal(await readFile(planFile, 'utf8'), PLAN);
    assert.ok(!existsSync(path.join(windowHome, '.claude')), `the window's HOME untouched: ${readdirSync(windowHome).join(' ')}`);
    assert.equal(await readFile(app, 'utf8'), ORIGINAL_APP);
    const log = () => readFile(connection.place.logFile, 'utf8');
    assert.match(await log(), /Claude \(ACP\)\] started .* \(pid \d+, sandboxed, workspace read-only\)/);

    const plan = String((request.request as { input?: { plan?: string } }).input?.plan ?? '');
    await client.sendEvents(id, [controlResponseEvent(String(request.request_id), { behavior: 'allow', updatedInput: { plan } })]);
    await waitFor(() => readFile(app, 'utf8'), { message: 'the edit', timeoutMs: WAIT_MS, until: (text) => text === UPDATED_APP });
    assert.match(await log(), /Claude \(ACP\)\] started .* \(pid \d+, sandboxed, workspace writable\)/);
    await waitFor(() => client.getStatus(id), { message: 'the agent to finish', timeoutMs: WAIT_MS, until: (status) => status === 'idle' });
    assert.deepEqual(model.scenario.overruns, [], 'the model was asked nothing past its script');
  });

  it("reads the person's saved Claude login (no ANTHROPIC_API_KEY): the model receives its OAuth token", async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-sandboxed-claude-login-'));
    const workspace = path.join(root, 'workspace');
    const windowHome = path.join(root, 'window-home');
    await mkdir(workspace, { recursive: true });
    await mkdir(path.join(windowHome, '.claude'), { recursive: true });
    await writeFile(path.join(workspace, 'README.md'), 'a project\n');
    // As `claude login` saves it on Linux (its bundle's storagePath: ~/.claude/.credentials.json).
    const accessToken = `sk-ant-oat01-person-${Date.now()}`;
    const credentials = JSON.stringify({
      claudeAiOauth: {
        accessToken,
        refreshToken: 'sk-ant-ort01-person',
        expiresAt: Date.now() + 3_600_000,
        scopes: ['user:inference', 'user:profile', 'user:sessions:claude_code'],
        subscriptionType: 'pro',
      },
    });
    await writeFile(path.join(windowHome, '.claude', '.credentials.json'), credentials, { mode: 0o600 });
    model = new ScriptedModelServer(anthropicApi, new Scenario([() => ({ text: 'Planned nothing.' })]));
    const url = await model.start();
    const { ANTHROPIC_API_KEY: _key, ...env } = { ...process.env, ...claudeEnv(windowHome, url) };
    delete env.CLAUDE_CONFIG_DIR;
    const { client, launch } = await sandboxedClaude(env, workspace);
    await createSession(client, launch, 'Say hello');
    const current = model;
    const round = await waitFor(async () => current.rounds[0], { message: 'a model request', timeoutMs: WAIT_MS });
    assert.equal(round.headers.authorization, `Bearer ${accessToken}`, JSON.stringify(round.headers));
    assert.equal(round.headers['x-api-key'], undefined);
  });
});
