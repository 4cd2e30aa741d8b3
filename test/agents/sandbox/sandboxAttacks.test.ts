// A sandboxed agent attacks as an attacker would, with real processes: bubblewrap, the egress
// proxy, a real HTTP model API on 127.0.0.1. Every probe also runs unsandboxed with the same
// arguments and must succeed there, so a refusal inside is the sandbox's doing, not the setup's.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { prepareSandboxedSpawn, sandboxSupport, type SandboxEnv, type SandboxSpec, type SandboxTools } from '../../../src/agents/sandbox';
import type { EgressDecision } from '../../../src/agents/sandbox/egressProxy';
import { anthropicApi } from '../../support/modelApi/anthropic';
import { Scenario, ScriptedModelServer } from '../../support/modelApi/scenario';
import { isAlive, waitGone } from '../../support/processes';
import { waitFor } from '../../support/wait';

const PROBE = path.join(__dirname, 'fixtures', 'probe.mjs');

interface StepResult {
  ok: boolean;
  code?: string;
  text?: string;
  entries?: string[];
  env?: Record<string, string>;
  home?: string;
  tmp?: string;
  cwd?: string;
}
type Step = Record<string, unknown> & { op: string };

interface Session {
  id: string;
  workspace: string;
  home: string;
  tmp: string;
}

describe('agent sandbox: a sandboxed agent attacks (bubblewrap, real processes)', function () {
  this.timeout(60_000);
  let root: string;
  let tools: SandboxTools;
  let mine: Session;
  let sibling: Session;
  let stateDir: string;

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    const support = sandboxSupport();
    assert.ok(support.supported, `this Linux machine must sandbox agents: ${support.supported ? '' : support.reason}`);
    tools = support.tools;
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-sandbox-test-'));
    const session = (id: string): Session => {
      const base = path.join(root, 'sessions', id);
      const made = { id, workspace: path.join(base, 'workspace'), home: path.join(base, 'home'), tmp: path.join(base, 'tmp') };
      for (const dir of [made.workspace, made.home, made.tmp]) mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(made.workspace, 'README.md'), `workspace of ${id}\n`);
      writeFileSync(path.join(made.home, 'credentials'), `login of ${id}\n`);
      return made;
    };
    mine = session('s1');
    sibling = session('s2');
    stateDir = path.join(root, 'state');
    mkdirSync(stateDir);
    writeFileSync(path.join(stateDir, 'journal.db'), 'the service journal\n');
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  function specOf(session: Session, extra: Partial<SandboxSpec> = {}): SandboxSpec {
    return {
      sessionId: session.id,
      workspace: session.workspace,
      mode: 'planning',
      home: session.home,
      tmp: session.tmp,
      allowedHosts: [],
      readOnlyPaths: [path.dirname(PROBE)],
      ...extra,
    };
  }

  function collect(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, pids?: number[]): Promise<StepResult[]> {
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      if (child.pid !== undefined) pids?.push(child.pid);
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.once('error', reject);
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(out) as StepResult[]);
        } catch {
          reject(new Error(`probe ended ${code ?? signal} without results; stdout: ${out} stderr: ${err}`));
        }
      });
    });
  }

  /** The probe inside the session's sandbox; returns its results and what the proxy decided. */
  async function inside(
    spec: SandboxSpec,
    steps: Step[],
    env: SandboxEnv = {},
  ): Promise<{ results: StepResult[]; decisions: EgressDecision[]; args: string[] }> {
    const prepared = await prepareSandboxedSpawn(spec, [process.execPath, PROBE, JSON.stringify(steps)], env, tools);
    try {
      const results = await collect(prepared.command, prepared.args, prepared.env, prepared.cwd);
      return { results, decisions: [...(prepared.proxy?.decisions ?? [])], args: prepared.args };
    } finally {
      await prepared.cleanup();
    }
  }

  /** The same probe as an unsandboxed agent runs today: our environment, the workspace as cwd. */
  function outside(spec: SandboxSpec, steps: Step[]): Promise<StepResult[]> {
    return collect(process.execPath, [PROBE, JSON.stringify(steps)], process.env, spec.workspace);
  }

  function at<T>(list: readonly T[], index: number): T {
    const value = list[index];
    assert.ok(value !== undefined, `no result ${index}`);
    return value;
  }

  it("reads its own workspace, but not another session's workspace or home, the service's state or the service's HOME", async () => {
    const steps: Step[] = [
      { op: 'read', path: path.join(mine.workspace, 'README.md') },
      { op: 'read', path: path.join(sibling.workspace, 'README.md') },
      { op: 'read', path: path.join(sibling.home, 'credentials') },
      { op: 'list', path: path.join(root, 'sessions') },
      { op: 'read', path: path.join(stateDir, 'journal.db') },
      { op: 'list', path: homedir() },
    ];
    const free = await outside(specOf(mine), steps);
    assert.deepEqual(
      free.map((r) => r.ok),
      [true, true, true, true, true, true],
      `unsandboxed, every read works: ${JSON.stringify(free)}`,
    );
    const { results } = await inside(specOf(mine), steps);
    assert.equal(at(results, 0).text, 'workspace of s1\n');
    for (const index of [1, 2, 4, 5])
      assert.equal(at(results, index).code, 'ENOENT', `step ${index}: ${JSON.stringify(at(results, index))}`);
    // Only this session's own folders exist under the sessions root.
    assert.deepEqual(at(results, 3).entries, ['s1']);
  });

  it("cannot read the service's /proc/<pid>/environ nor see any process outside its own PID namespace", async () => {
    // Stands for the service: its environment (fixed at exec) holds the database URL.
    const service = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)'], {
      env: { ...process.env, ULTRAPLAN_DATABASE_URL: 'postgres://service:environ-secret-4711@db/ultraplan' },
      stdio: 'ignore',
    });
    try {
      const pid = service.pid;
      assert.ok(pid !== undefined);
      const steps: Step[] = [{ op: 'read', path: `/proc/${pid}/environ` }, { op: 'pids' }];
      const free = await outside(specOf(mine), steps);
      assert.ok(at(free, 0).text?.includes('environ-secret-4711'), 'unsandboxed, the service environ is readable');
      assert.ok(at(free, 1).entries?.includes(String(pid)));
      const { results } = await inside(specOf(mine), steps);
      assert.equal(at(results, 0).code, 'ENOENT');
      const pids = at(results, 1).entries ?? [];
      assert.ok(pids.length > 0 && pids.length <= 3, `only the sandbox's own processes: ${pids.join(' ')}`);
      assert.ok(
        pids.every((seen) => Number(seen) <= 3),
        `pids of the sandbox's own namespace: ${pids.join(' ')}`,
      );
    } finally {
      service.kill('SIGKILL');
    }
  });

  it('cannot write its workspace while planning (EROFS), can once executing', async () => {
    const target = path.join(mine.workspace, 'planted.txt');
    const free = await outside(specOf(mine), [{ op: 'write', path: path.join(mine.workspace, 'unsandboxed.txt') }]);
    assert.ok(at(free, 0).ok, 'unsandboxed, the workspace is writable');
    const planning = await inside(specOf(mine), [{ op: 'write', path: target }]);
    assert.equal(at(planning.results, 0).code, 'EROFS');
    assert.equal(existsSync(target), false);
    const executing = await inside(specOf(mine, { mode: 'executing' }), [{ op: 'write', path: target, text: 'approved edit' }]);
    assert.ok(at(executing.results, 0).ok, JSON.stringify(executing.results));
    assert.equal(readFileSync(target, 'utf8'), 'approved edit');
  });

  it('has a HOME and a temp folder of its own; /tmp is private and empty', async () => {
    const hostMarker = path.join(tmpdir(), `ultraplan-sandbox-host-${process.pid}`);
    writeFileSync(hostMarker, 'a file of the host /tmp');
    try {
      const steps: Step[] = [
        { op: 'env' },
        { op: 'write', path: path.join(mine.home, 'agent-login'), text: 'cached login' },
        { op: 'write', path: path.join(mine.tmp, 'scratch') },
        { op: 'read', path: hostMarker },
        { op: 'write', path: '/tmp/left-in-tmpfs' },
      ];
      const free = await outside(specOf(mine), [{ op: 'read', path: hostMarker }]);
      assert.ok(at(free, 0).ok);
      const { results } = await inside(specOf(mine), steps);
      const env = at(results, 0);
      assert.equal(env.env?.HOME, mine.home);
      assert.equal(env.home, mine.home);
      assert.equal(env.tmp, mine.tmp);
      assert.equal(env.cwd, mine.workspace);
      assert.ok(at(results, 1).ok && at(results, 2).ok, JSON.stringify(results));
      assert.equal(readFileSync(path.join(mine.home, 'agent-login'), 'utf8'), 'cached login');
      assert.ok(existsSync(path.join(mine.tmp, 'scratch')));
      assert.equal(at(results, 3).code, 'ENOENT', "the host's /tmp is not the sandbox's");
      assert.ok(at(results, 4).ok);
      assert.equal(existsSync('/tmp/left-in-tmpfs'), false);
    } finally {
      await rm(hostMarker, { force: true });
    }
  });

  it('gets only the allowed variables: no service secret, the named API key, and no key on the command line', async () => {
    const secrets = {
      ULTRAPLAN_DATABASE_URL: 'postgres://service:db-password@127.0.0.1/ultraplan',
      ULTRAPLAN_SERVER_TOKEN: 'server-token-0123456789',
      SOME_OTHER_SECRET: 'other-secret',
      MODEL_API_KEY: 'model-key-abcdef',
    };
    Object.assign(process.env, secrets);
    try {
      const free = await outside(specOf(mine), [{ op: 'env' }]);
      for (const name of Object.keys(secrets)) assert.ok(at(free, 0).env?.[name], `unsandboxed, ${name} is inherited`);
      const { results, args } = await inside(specOf(mine), [{ op: 'env' }], { pass: ['MODEL_API_KEY'], set: { IS_SANDBOX: '1' } });
      const env = at(results, 0).env ?? {};
      assert.equal(env.MODEL_API_KEY, 'model-key-abcdef');
      assert.equal(env.IS_SANDBOX, '1');
      for (const name of ['ULTRAPLAN_DATABASE_URL', 'ULTRAPLAN_SERVER_TOKEN', 'SOME_OTHER_SECRET'])
        assert.equal(env[name], undefined, name);
      const everything = JSON.stringify(env);
      for (const value of [secrets.ULTRAPLAN_DATABASE_URL, secrets.ULTRAPLAN_SERVER_TOKEN, secrets.SOME_OTHER_SECRET]) {
        assert.ok(!everything.includes(value), `a secret value leaked: ${value}`);
      }
      // Another user's `ps` reads a command line, never an environment.
      assert.ok(!args.join(' ').includes(secrets.MODEL_API_KEY));
      await assert.rejects(
        prepareSandboxedSpawn(specOf(mine), ['true'], { pass: ['ULTRAPLAN_SERVER_TOKEN'] }, tools),
        /never handed to an agent/,
      );
    } finally {
      for (const name of Object.keys(secrets)) delete process.env[name];
    }
  });

  describe('network', () => {
    let model: ScriptedModelServer;
    let modelPort: number;
    let database: Server;
    let databasePort: number;

    before(async () => {
      model = new ScriptedModelServer(anthropicApi, new Scenario([]));
      modelPort = Number(new URL(await model.start()).port);
      // Stands for the service's database / API: a loopback port no agent may reach.
      database = createServer((socket) => {
        socket.on('error', () => undefined);
        socket.end('database\n');
      });
      await new Promise<void>((resolve) => database.listen(0, '127.0.0.1', resolve));
      const address = database.address();
      assert.ok(address && typeof address === 'object');
      databasePort = address.port;
    });

    after(async () => {
      await model?.close();
      await new Promise<void>((resolve) => (database ? database.close(() => resolve()) : resolve()));
    });

    it('reaches nothing directly: not the database port, not even the allowed model port', async () => {
      const steps: Step[] = [
        { op: 'tcp', host: '127.0.0.1', port: databasePort },
        { op: 'tcp', host: '127.0.0.1', port: modelPort },
      ];
      const free = await outside(specOf(mine), steps);
      assert.deepEqual(
        free.map((r) => r.ok),
        [true, true],
        'unsandboxed, both ports answer',
      );
      const { results } = await inside(specOf(mine, { allowedHosts: [`127.0.0.1:${modelPort}`] }), steps);
      assert.deepEqual(
        results.map((r) => r.code),
        ['ECONNREFUSED', 'ECONNREFUSED'],
      );
    });

    it('reaches the allowed model API through its proxy, and is refused the database, the metadata address and a name that resolves to loopback', async () => {
      const spec = specOf(mine, { allowedHosts: [`127.0.0.1:${modelPort}`, `localhost:${databasePort}`] });
      const steps: Step[] = [
        { op: 'env' },
        { op: 'proxy', target: `127.0.0.1:${modelPort}`, path: '/v1/models' },
        { op: 'proxy', target: `127.0.0.1:${databasePort}` },
        { op: 'proxy', target: '169.254.169.254:80', path: '/latest/meta-data/' },
        { op: 'proxy', target: `localhost:${databasePort}` },
        { op: 'proxy', target: 'example.com:443' },
      ];
      const before = model.requests.length;
      const { results, decisions } = await inside(spec, steps);
      assert.equal(at(results, 0).env?.HTTPS_PROXY, 'http://127.0.0.1:3128');
      assert.ok(at(results, 1).ok, JSON.stringify(at(results, 1)));
      assert.match(at(results, 1).text ?? '', /^HTTP\/1\.1 \d{3}/);
      assert.equal(model.requests.length, before + 1, 'the model API saw the request');
      assert.equal(model.requests.at(-1)?.url, '/v1/models');
      for (const index of [2, 3, 4, 5])
        assert.equal(at(results, index).code, 'HTTP 403', `step ${index}: ${JSON.stringify(at(results, index))}`);
      const reasons = decisions.filter((d) => !d.allowed).map((d) => d.reason ?? '');
      assert.match(reasons[0] ?? '', /not on the allow list/);
      assert.match(reasons[1] ?? '', /link-local|not on the allow list/);
      assert.match(reasons[2] ?? '', /loopback/);
      assert.match(reasons[3] ?? '', /not on the allow list/);
    });

    it('with no allowed host there is no proxy and no way out at all', async () => {
      const { results, decisions } = await inside(specOf(mine), [
        { op: 'env' },
        { op: 'proxy', target: `127.0.0.1:${modelPort}`, proxy: 'http://127.0.0.1:3128' },
      ]);
      assert.equal(at(results, 0).env?.HTTPS_PROXY, undefined);
      assert.equal(at(results, 1).code, 'ECONNREFUSED');
      assert.equal(decisions.length, 0);
    });
  });

  it('is gone, with everything it started, once its process group is signalled as the service stops an agent', async () => {
    const marker = `hold-${process.pid}-${Date.now()}`;
    const prepared = await prepareSandboxedSpawn(
      specOf(mine, { allowedHosts: ['api.anthropic.com'] }),
      [process.execPath, PROBE, JSON.stringify([{ op: 'hold', marker }])],
      {},
      tools,
    );
    const pids: number[] = [];
    const running = collect(prepared.command, prepared.args, prepared.env, prepared.cwd, pids).catch(() => []);
    try {
      const holder = await waitFor(
        () =>
          readdirSync('/proc')
            .filter((name) => /^\d+$/.test(name))
            .map(Number)
            .find((pid) => {
              try {
                const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
                return argv[0] === process.execPath && argv.some((arg) => arg.includes(marker));
              } catch {
                return false;
              }
            }),
        { message: 'the sandboxed probe running', timeoutMs: 10_000 },
      );
      const sandbox = pids[0];
      assert.ok(sandbox !== undefined && isAlive(holder));
      process.kill(-sandbox, 'SIGTERM');
      assert.ok(await waitGone(holder, 5000), 'the agent inside outlived its sandbox');
      assert.ok(await waitGone(sandbox, 5000));
    } finally {
      for (const pid of pids) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      await running;
      await prepared.cleanup();
    }
  });
});
