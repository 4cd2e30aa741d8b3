// Claude's real ACP adapter (and the Claude Code program it drives) run by the real
// ultraplan-server in a session's sandbox, with only the model scripted on 127.0.0.1: the agent's
// network namespace has nothing but loopback, so every model request it made went through the
// session's egress proxy; it plans in its own HOME under the server's data directory.
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { controlResponseEvent } from '../../../src/core/protocol';
import { sandboxSupport } from '../../../src/agents/sandbox';
import { anthropicApi } from '../../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../../support/modelApi/scenario';
import { loggedAgentPid, processTree, waitGone } from '../../support/processes';
import { CLAUDE_ADAPTER, claudeEnv, claudePlanThenWrite } from '../../support/realAgents';
import { ORIGINAL_APP } from '../../support/acpFixtures';
import { startServer, type ServerProcess } from '../../support/serverProcess';
import { createRequest } from '../../service/hostTestKit';
import { call, waitForEvents } from '../../service/server/serverTestKit';

const PLAN = '# Plan: flip the flag\n\n1. Set `original` to false in src/app.ts.\n';
const UPDATED_APP = 'export const original = false;\n';

type Event = { type?: string; request_id?: string; request?: { subtype?: string; tool_name?: string; input?: Record<string, unknown> } };

function openRequest(events: Event[], tool: RegExp): Event | undefined {
  const answered = new Set(
    events.filter((event) => event.type === 'control_response').map((event) => JSON.stringify(event).match(/"request_id":"([^"]+)"/)?.[1]),
  );
  return events.find(
    (event) =>
      event.type === 'control_request' &&
      event.request?.subtype === 'can_use_tool' &&
      tool.test(event.request.tool_name ?? '') &&
      !answered.has(event.request_id),
  );
}

describe('agent sandbox: the real Claude adapter planning in a session sandbox of the real server', function () {
  this.timeout(150_000);
  let root: string;
  let model: ScriptedModelServer | undefined;
  let server: ServerProcess | undefined;

  before(function () {
    if (process.platform !== 'linux') this.skip();
    const support = sandboxSupport();
    assert.ok(support.supported, `this Linux machine must sandbox agents: ${support.supported ? '' : support.reason}`);
  });

  afterEach(async () => {
    await server?.stop().catch(() => undefined);
    server = undefined;
    await model?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('plans through the proxy in its own HOME, read-only; after Approve it carries the plan out in a writable sandbox', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-sandboxed-claude-'));
    const workspace = path.join(root, 'workspace');
    const dataDir = path.join(root, 'data');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await writeFile(path.join(workspace, 'README.md'), '# Demo project\n');
    const app = path.join(workspace, 'src', 'app.ts');
    await writeFile(app, ORIGINAL_APP);
    let planFile = '';
    model = new ScriptedModelServer(
      anthropicApi,
      new Scenario(
        claudePlanThenWrite(
          PLAN,
          () => app,
          UPDATED_APP,
          (file) => (planFile = file),
        ),
      ),
    );
    const url = await model.start();
    // The server's own HOME is not the agent's: the sandbox gives each session one of its own.
    const serverHome = path.join(root, 'server-home');
    await mkdir(serverHome);
    server = await startServer({
      agent: `acp:${JSON.stringify(CLAUDE_ADAPTER)}`,
      dataDir,
      env: claudeEnv(serverHome, url),
      extraArgs: ['--workspace', workspace, '--sandbox', 'required'],
    });
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Flip the flag in src/app.ts'));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const events = await waitForEvents(server, id, (found) => openRequest(found, /ExitPlanMode/) !== undefined, 90_000);

    // The agent and everything it started live in a network namespace of their own.
    const agentPid = loggedAgentPid(server.stderr());
    const ourNet = readlinkSync('/proc/self/ns/net');
    const agentProcesses = processTree(agentPid);
    assert.ok(agentProcesses.length >= 3, `bubblewrap, the adapter, Claude Code: ${agentProcesses.join(' ')}`);
    const nets = agentProcesses.slice(1).map((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/ns/net`);
      } catch {
        return undefined;
      }
    });
    assert.ok(
      nets.every((net) => net === undefined || net !== ourNet),
      `every agent process outside our network namespace: ${nets.join(' ')}`,
    );
    // ... and yet the scripted model answered each of its requests: the proxy was its one way there.
    assert.ok(model.rounds.length >= 3, model.describe());
    assert.match(server.stderr(), /started .* \(pid \d+, sandboxed, workspace read-only\)/);

    // Its plan file is in the session's own HOME under the data directory, never the server's.
    const sessionHome = path.join(dataDir, 'sandboxes', id, 'home');
    assert.ok(planFile.startsWith(`${sessionHome}/`), `plan file ${planFile}`);
    assert.equal(readFileSync(planFile, 'utf8'), PLAN);
    assert.ok(!existsSync(path.join(serverHome, '.claude')), `the server's HOME untouched: ${readdirSync(serverHome).join(' ')}`);
    const exit = openRequest(events, /ExitPlanMode/) as Event;
    assert.match(JSON.stringify(exit.request?.input ?? {}), /flip the flag/);
    assert.equal(readFileSync(app, 'utf8'), ORIGINAL_APP);

    // Approve: the agent comes back in a sandbox whose workspace is writable, its conversation
    // loaded, and its edit (asked, as ultraplan.afterApproval "default" says) lands.
    const plan = String((exit.request?.input as { plan?: string } | undefined)?.plan ?? PLAN);
    await call(server, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(exit.request_id as string, { behavior: 'allow', updatedInput: { plan } })],
    });
    const asked = await waitForEvents(server, id, (found) => openRequest(found, /Write/) !== undefined, 60_000);
    const write = openRequest(asked, /Write/) as Event;
    await call(server, 'POST', `/v1/sessions/${id}/events`, {
      events: [controlResponseEvent(write.request_id as string, { behavior: 'allow', updatedInput: write.request?.input ?? {} })],
    });
    const done = await waitForEvents(server, id, (found) => found.some((event) => event.type === 'result'), 60_000);
    const result = done.find((event) => event.type === 'result');
    assert.equal(result.is_error, false, JSON.stringify(result));
    assert.equal(readFileSync(app, 'utf8'), UPDATED_APP);
    assert.match(server.stderr(), /started .* \(pid \d+, sandboxed, workspace writable\)/);
    const carriedOut = model.rounds.at(-2)?.view?.allText ?? '';
    assert.match(carriedOut, /The reviewer approved the plan below\. Carry it out now/);
    const executingPid = loggedAgentPid(server.stderr());
    assert.notEqual(executingPid, agentPid, 'a new sandbox carried the plan out');
    assert.ok(await waitGone(agentPid), 'the planning sandbox is gone');

    await server.stop();
    server = undefined;
    assert.ok(await waitGone(executingPid), 'the sandbox outlived the server');
  });
});
