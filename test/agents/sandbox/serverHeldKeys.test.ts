// The single-process ultraplan-server holds its agents' model key back as the workers do
// (--agent-key-file NAME=FILE, src/service/heldKeysFlag.ts): a real server runs the fake ACP agent
// in its sandbox; the agent reads its environment, its own /proc and the server's, then calls its
// model API (a real HTTP server on 127.0.0.1) through its egress proxy. The key is in nothing it
// read nor in the server's environment or command line; the model API receives it. A key file
// that is missing, readable by others or not a key alone stops the server at start, saying why.
// The local service, sandboxing, holds back its window's key the same way.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sandboxSupport } from '../../../src/agents/sandbox';
import { fakeAgentCommand } from '../../support/fakeAcpAgent';
import { probeOf, probeScenario, PROBE_PLAN_MODES, type AgentProbe } from '../../support/agentProbe';
import { runServerCli, SERVER_JS, startServer, type ServerProcess } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';
import { SessionsClient } from '../../../src/client/sessionsClient';
import { socketFetch } from '../../../src/client/localService/socketFetch';
import { createSession } from '../../client/localService/serviceKit';
import { createRequest } from '../../service/hostTestKit';
import { call, waitForEvents } from '../../service/server/serverTestKit';

const KEY_NAMES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    }),
  );
}

/** The fake ACP agent as an --agent spec (node, its program, its scenario file). */
function agentSpec(scenario: string): string {
  return `acp:${fakeAgentCommand(scenario, '')
    .slice(0, 3)
    .map((arg) => JSON.stringify(arg))
    .join(' ')}`;
}

describe('agent sandbox: the single server holds its model key back (--agent-key-file; real server, bubblewrap, proxy)', function () {
  this.timeout(90_000);
  let root: string;
  let server: ServerProcess | undefined;
  let model: Server | undefined;
  const saved = new Map<string, string | undefined>();

  before(function () {
    if (process.platform !== 'linux') this.skip();
    const support = sandboxSupport();
    assert.ok(support.supported, `this Linux machine must sandbox agents: ${support.supported ? '' : support.reason}`);
    // The server inherits this process's environment: no key of ours may reach it that way.
    for (const name of KEY_NAMES) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
  });

  after(() => {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  });

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-server-held-key-'));
  });

  let stopService: (() => Promise<void>) | undefined;

  afterEach(async () => {
    await stopService?.();
    stopService = undefined;
    await server?.stop().catch(() => undefined);
    server = undefined;
    await new Promise<void>((resolve) => (model ? model.close(() => resolve()) : resolve()));
    model = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it("gives its agent a stand-in: the key is in no variable, /proc or file the agent reads, nor the server's; the model API gets it", async () => {
    const modelKey = `sk-ant-api03-single-server-${Date.now()}`;
    const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
    model = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"message"}');
    });
    const modelPort = await listen(model);
    const keyFile = path.join(root, 'anthropic-api-key');
    writeFileSync(keyFile, `${modelKey}\n`, { mode: 0o600 });
    const workspace = path.join(root, 'workspace');
    mkdirSync(workspace);
    writeFileSync(path.join(workspace, 'README.md'), '# project\n');
    // In the workspace: the one folder of ours the agent's sandbox shows.
    const scenario = path.join(workspace, 'scenario.json');
    writeFileSync(scenario, JSON.stringify({ modes: PROBE_PLAN_MODES, turns: [[{ chunk: 'nothing yet' }]] }));

    server = await startServer({
      agent: agentSpec(scenario),
      // The operator's model address: a plain-http gateway on loopback, as a test can run one.
      env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}` },
      extraArgs: ['--workspace', workspace, '--sandbox', 'required', '--agent-key-file', `ANTHROPIC_API_KEY=${keyFile}`],
    });
    const serverPid = server.pid;
    // From outside the server's own files are there to read: what the agent misses, its sandbox hid.
    assert.match(readFileSync(`/proc/${serverPid}/environ`, 'utf8'), /PATH=/);
    // The scenario is read when the session's agent starts, so it may name the server's pid.
    writeFileSync(
      scenario,
      probeScenario({
        read: ['/proc/self/environ', `/proc/${serverPid}/environ`, `/proc/${serverPid}/cmdline`, keyFile],
        http: [{ url: '$ANTHROPIC_BASE_URL/v1/messages?key=$ANTHROPIC_API_KEY', headers: { 'x-api-key': '$ANTHROPIC_API_KEY' } }],
      }),
    );
    const created = await call(server, 'POST', '/v1/sessions', createRequest('Plan the change'));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const events = await waitForEvents(
      server,
      created.body.id as string,
      (found) => probeOf(found) !== undefined || found.some((event) => event.type === 'result'),
      30_000,
    );
    const probe = probeOf(events);
    assert.ok(probe, `the agent ran its probe: ${JSON.stringify(events.at(-1))}\n${server.stderr()}`);

    // Its environment holds a stand-in, and its base URL the model API over plain http (the proxy's).
    const standIn = probe.env.ANTHROPIC_API_KEY ?? '';
    assert.match(standIn, /^ultraplan-held-key-[0-9a-f]{48}$/);
    assert.equal(probe.env.ANTHROPIC_BASE_URL, `http://127.0.0.1:${modelPort}`);
    assert.ok(probe.pid < 20, `the agent runs in a PID namespace of its own (pid ${probe.pid})`);
    const ownEnviron = probe.read['/proc/self/environ'];
    assert.ok(ownEnviron?.ok && String(ownEnviron.value).includes(standIn), 'the agent read its own /proc/self/environ');
    // The server's /proc is not in its namespace (or that pid is one of its own processes), the key file not in its sandbox.
    for (const file of [`/proc/${serverPid}/environ`, `/proc/${serverPid}/cmdline`]) {
      const outcome = probe.read[file];
      assert.ok(!outcome?.ok || !String(outcome.value).includes('server.mjs'), `${file}: ${JSON.stringify(outcome)}`);
    }
    assert.deepEqual(probe.read[keyFile], { ok: false, code: 'ENOENT' });
    assert.ok(!JSON.stringify(probe).includes(modelKey), 'the model key reached the agent');

    // Its call went through the proxy, which put the key in place of the stand-in: header and query.
    const called = probe.http['$ANTHROPIC_BASE_URL/v1/messages?key=$ANTHROPIC_API_KEY'];
    assert.equal(called?.ok, true, JSON.stringify(called));
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.headers['x-api-key'], modelKey);
    assert.equal(seen[0]?.url, `/v1/messages?key=${modelKey}`);

    // The server itself was handed the key by a file alone: not in its environment, command line or log.
    for (const file of ['environ', 'cmdline']) {
      assert.ok(!readFileSync(`/proc/${serverPid}/${file}`, 'utf8').includes(modelKey), `the server's ${file}`);
    }
    assert.ok(!server.stderr().includes(modelKey), 'the key is in the server log');
  });

  it("the local service, sandboxed, gives its agents a stand-in for its window's key, and the proxy adds the key", async () => {
    const windowKey = `sk-ant-api03-window-${Date.now()}`;
    const seen: IncomingHttpHeaders[] = [];
    model = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"message"}');
    });
    const modelPort = await listen(model);
    const workspace = path.join(root, 'workspace');
    mkdirSync(workspace);
    const scenario = path.join(workspace, 'scenario.json');
    const probeTurn = {
      probe: {
        read: ['/proc/self/environ'],
        http: [{ url: '$ANTHROPIC_BASE_URL/v1/messages', headers: { 'x-api-key': '$ANTHROPIC_API_KEY' } }],
      },
    };
    writeFileSync(scenario, JSON.stringify({ modes: PROBE_PLAN_MODES, turns: [[probeTurn]] }));
    const serviceDir = path.join(root, 'service');
    const socket = path.join(serviceDir, 'run', 'service.sock');
    const tokenFile = path.join(root, 'token');
    const token = `token-${Date.now()}`;
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    // The window's environment, as the extension starts the service with it: the key in a variable.
    const env = { ...process.env, ANTHROPIC_API_KEY: windowKey, ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}` };
    const args = ['--socket', socket, '--token-file', tokenFile, '--data-dir', path.join(serviceDir, 'data'), '--idle-exit-seconds', '0'];
    const child = spawn(process.execPath, [SERVER_JS, ...args, '--sandbox', 'required', '--agent', agentSpec(scenario)], {
      cwd: workspace,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    stopService = async () => {
      child.kill('SIGTERM');
      await exited;
    };
    await waitFor(() => stdout.includes('listening on unix:'), { message: `the service listening (stderr: ${stderr})`, timeoutMs: 20_000 });
    assert.match(stderr, /agents get a stand-in for ANTHROPIC_API_KEY/);
    assert.ok(!stderr.includes('WARNING: ANTHROPIC_API_KEY'), 'the window gives its key by its environment: no warning for that');

    const client = new SessionsClient({ baseUrl: 'http://localhost', getToken: async () => token, fetch: socketFetch(socket) });
    // The window's launch of its agent, as the extension sends it with the session.
    const launch = {
      kind: 'acp' as const,
      argv: fakeAgentCommand(scenario, '').slice(0, 3),
      cwd: workspace,
      label: 'Fake',
      afterApproval: 'default' as const,
      outsideAccess: 'ask' as const,
    };
    const id = await createSession(client, launch);
    let probe: AgentProbe | undefined;
    await waitFor(
      async () => {
        probe = probeOf((await client.readEventsPages(id, null)).events as Parameters<typeof probeOf>[0]);
        return probe !== undefined;
      },
      { message: `the agent's probe (stderr: ${stderr})`, timeoutMs: 30_000 },
    );
    const found = probe as AgentProbe;
    const standIn = found.env.ANTHROPIC_API_KEY ?? '';
    assert.match(standIn, /^ultraplan-held-key-[0-9a-f]{48}$/);
    assert.ok(String(found.read['/proc/self/environ']?.value).includes(standIn), 'the agent read its own /proc/self/environ');
    assert.ok(!JSON.stringify(found).includes(windowKey), "the window's key reached the agent");
    // The window's key still reaches its agent's model, added by the proxy.
    assert.equal(found.http['$ANTHROPIC_BASE_URL/v1/messages']?.ok, true, JSON.stringify(found.http));
    assert.equal(seen.at(-1)?.['x-api-key'], windowKey);
  });

  it('refuses at start a key file that is missing, readable by others, or not a key alone, and a key with no sandbox', async () => {
    const dataDir = path.join(root, 'data');
    const journal = ['--data-dir', dataDir, '--agent', 'scripted:examples/approve.json', '--insecure-no-auth', '--port', '0'];
    const refused = async (file: string, pattern: RegExp, store: string[] = journal) => {
      const result = await runServerCli([...store, '--agent-key-file', `ANTHROPIC_API_KEY=${file}`]);
      assert.equal(result.code, 2, `exit code (stderr: ${result.stderr})`);
      assert.equal(result.stdout, '', 'it never listened');
      assert.match(result.stderr, pattern);
      assert.ok(!result.stderr.includes('sk-ant-'), 'the refusal shows the key');
    };
    const missing = path.join(root, 'missing-key');
    await refused(missing, new RegExp(`--agent-key-file: cannot read ${missing} \\(ENOENT\\)`));
    const shared = path.join(root, 'shared-key');
    writeFileSync(shared, 'sk-ant-api03-shared\n', { mode: 0o644 });
    await refused(shared, /can be read by other users \(mode 644\).*chmod 600/);
    const asVariable = path.join(root, 'env-style-key');
    writeFileSync(asVariable, 'ANTHROPIC_API_KEY=sk-ant-api03-as-a-line\n', { mode: 0o600 });
    await refused(asVariable, /holds a NAME=value line; it must hold the ANTHROPIC_API_KEY key alone/);
    const twoLines = path.join(root, 'two-keys');
    writeFileSync(twoLines, 'sk-ant-api03-one\nsk-ant-api03-two\n', { mode: 0o600 });
    await refused(twoLines, /must hold the ANTHROPIC_API_KEY key alone, on one line/);
    const good = path.join(root, 'good-key');
    writeFileSync(good, 'sk-ant-api03-good\n', { mode: 0o400 });
    await refused(good, /--agent-key-file needs the sandbox/, [...journal, '--sandbox', 'off']);
    await refused(good, /give --agent and --agent-key-file to `ultraplan-server worker`/, ['--store', 'postgres://u@127.0.0.1:1/db']);
  });
});
