// Two people's sessions on one worker (real PostgreSQL, a real replica and worker, each session's
// git source cloned into a folder of its own), and the second session's agent is hostile: it uses
// node:fs itself, no ACP, to read the first session's workspace and sandbox HOME, the worker's
// /proc, its database URL file, and to write its own workspace while planning. Each target is
// first shown to exist and be readable from outside, so every refusal is the sandbox's doing.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sandboxSupport } from '../../../src/agents/sandbox';
import { fakeAgentCommand } from '../../support/fakeAcpAgent';
import { probeOf, probeScenario, PROBE_PLAN_MODES, type AgentProbe } from '../../support/agentProbe';
import { sharedPostgresCluster } from '../../support/postgresCluster';
import { serversPerTest, startWorker, type WorkerProcess } from '../../support/serverProcess';
import { createRequest } from '../../service/hostTestKit';
import { call, waitForEvents } from '../../service/server/serverTestKit';

function gitRepo(dir: string, readme: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'README.md'), readme);
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'ignore' });
  git('init', '--quiet', '--initial-branch', 'main');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '--quiet', '-m', 'init');
  return `file://${dir}`;
}

describe('agent sandbox: a hostile agent on a worker attacks another session (real worker, PostgreSQL, bubblewrap)', function () {
  this.timeout(90_000);
  const servers = serversPerTest();
  let root: string;
  let worker: WorkerProcess | undefined;

  before(function () {
    if (process.platform !== 'linux') this.skip();
    const support = sandboxSupport();
    assert.ok(support.supported, `this Linux machine must sandbox agents: ${support.supported ? '' : support.reason}`);
  });

  afterEach(async () => {
    await worker?.stop().catch(() => undefined);
    worker = undefined;
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("cannot read the other session's workspace or HOME, the worker's /proc or its secrets, nor write while planning", async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-worker-attack-'));
    const scratch = path.join(root, 'scratch');
    const victimSecret = `victim-code-${Date.now()}`;
    const victimRepo = gitRepo(path.join(root, 'repos', 'victim'), `# ${victimSecret}\n`);
    const attackerRepo = gitRepo(path.join(root, 'repos', 'attacker'), '# attacker\n');
    // The scenario is read by each agent when it starts: the victim's waits, the attacker's probes.
    const scenarioDir = path.join(root, 'agent');
    mkdirSync(scenarioDir);
    const scenario = path.join(scenarioDir, 'scenario.json');
    writeFileSync(
      scenario,
      JSON.stringify({ modes: PROBE_PLAN_MODES, turns: [[{ chunk: 'Reading the code.' }, { waitForCancel: true }]] }),
    );
    const argv = fakeAgentCommand(scenario, '');

    const modelKey = `sk-ant-api03-worker-key-${Date.now()}`;
    const keyFile = path.join(root, 'anthropic-api-key');
    writeFileSync(keyFile, `${modelKey}\n`, { mode: 0o400 });
    const database = await (await sharedPostgresCluster()).createDatabase();
    const server = await servers.start({ store: database, storeInFile: true });
    worker = await startWorker({
      store: database,
      storeInFile: true,
      agent: `acp:${argv
        .slice(0, 3)
        .map((arg) => JSON.stringify(arg))
        .join(' ')}`,
      // The two repositories are folders of this machine (file://): a worker fetches those only when told.
      // The model key comes as a file, as a mounted Secret does; agents get a stand-in.
      extraArgs: [
        '--scratch',
        scratch,
        '--workspace',
        scenarioDir,
        '--allow-file-sources',
        '--agent-key-file',
        `ANTHROPIC_API_KEY=${keyFile}`,
      ],
    });
    const workerPid = worker.pid;
    const workerArgs = readFileSync(`/proc/${workerPid}/cmdline`, 'utf8').split('\0');
    const databaseFile = workerArgs[workerArgs.indexOf('--database-url-file') + 1] as string;
    assert.ok(existsSync(databaseFile), `the worker's --database-url-file (${databaseFile})`);

    const victim = await call(server, 'POST', '/v1/sessions', {
      ...createRequest('Plan the victim change'),
      session_context: { sources: [{ type: 'git_repository', url: victimRepo }], outcomes: [] },
    });
    assert.equal(victim.status, 200, JSON.stringify(victim.body));
    const victimId = victim.body.id as string;
    // Its agent is up (the init event follows the handshake) and stays in its turn.
    await waitForEvents(server, victimId, (events) => events.some((event) => event.subtype === 'init'), 30_000);
    const victimWorkspace = path.join(scratch, victimId);
    const victimHome = path.join(scratch, 'sandboxes', victimId, 'home');
    writeFileSync(path.join(victimHome, 'credentials'), 'the victim agent login\n');
    // From outside every target is there: what the attacker misses, the sandbox hid.
    assert.match(readFileSync(path.join(victimWorkspace, 'README.md'), 'utf8'), new RegExp(victimSecret));
    assert.match(readFileSync(`/proc/${workerPid}/environ`, 'utf8'), /PATH=/);

    writeFileSync(
      scenario,
      probeScenario({
        read: [
          path.join(victimWorkspace, 'README.md'),
          path.join(victimHome, 'credentials'),
          `/proc/${workerPid}/environ`,
          `/proc/${workerPid}/cmdline`,
          databaseFile,
          keyFile,
          '/proc/self/environ',
          '/proc/1/environ',
          '/proc/1/cmdline',
          '{{cwd}}/README.md',
        ],
        list: [scratch, '/proc', path.dirname(databaseFile)],
        write: ['{{cwd}}/PWNED.md', '/tmp/scratch-of-its-own'],
      }),
    );
    const attacker = await call(server, 'POST', '/v1/sessions', {
      ...createRequest('Plan the attacker change'),
      session_context: { sources: [{ type: 'git_repository', url: attackerRepo }], outcomes: [] },
    });
    assert.equal(attacker.status, 200, JSON.stringify(attacker.body));
    const attackerId = attacker.body.id as string;
    const events = await waitForEvents(server, attackerId, (found) => probeOf(found) !== undefined, 30_000);
    const probe = probeOf(events) as AgentProbe;
    const attackerWorkspace = path.join(scratch, attackerId);

    // Its own workspace it reads; the other session's folders and the worker's do not exist for it.
    assert.equal(probe.read[`${attackerWorkspace}/README.md`]?.ok, true, JSON.stringify(probe.read));
    assert.deepEqual(probe.read[path.join(victimWorkspace, 'README.md')], { ok: false, code: 'ENOENT' });
    assert.deepEqual(probe.read[path.join(victimHome, 'credentials')], { ok: false, code: 'ENOENT' });
    assert.deepEqual(probe.read[databaseFile], { ok: false, code: 'ENOENT' });
    // Its own PID namespace: the worker's pid is not there (or is some process of its own, never the worker).
    for (const file of [`/proc/${workerPid}/environ`, `/proc/${workerPid}/cmdline`]) {
      const outcome = probe.read[file];
      assert.ok(!outcome?.ok || !String(outcome.value).includes('worker'), `${file}: ${JSON.stringify(outcome)}`);
      assert.ok(!JSON.stringify(outcome).includes(database), `${file} showed the database URL`);
    }
    const ownPids = (probe.list['/proc']?.value as string[]).filter((name) => /^\d+$/.test(name)).map(Number);
    assert.ok(ownPids.length > 0 && ownPids.every((pid) => pid < 20), `only the sandbox's own processes: ${ownPids.join(' ')}`);
    assert.ok(probe.pid < 20, `the agent's own pid inside: ${probe.pid}`);
    // The scratch folder shows only what the sandbox binds of it: its own workspace and sandbox.
    const listed = probe.list[scratch];
    assert.ok(!listed?.ok || !(listed.value as string[]).includes(victimId), `the scratch folder: ${JSON.stringify(listed)}`);
    assert.ok(!probe.list[path.dirname(databaseFile)]?.ok, 'the secret folder is not there');
    // Read-only while planning (the kernel says so), and /tmp its own.
    assert.deepEqual(probe.write[`${attackerWorkspace}/PWNED.md`], { ok: false, code: 'EROFS' });
    assert.equal(existsSync(path.join(attackerWorkspace, 'PWNED.md')), false);
    assert.equal(probe.write['/tmp/scratch-of-its-own']?.ok, true);
    // No variable of ours, its HOME its session's.
    assert.equal(probe.env.HOME, path.join(scratch, 'sandboxes', attackerId, 'home'));
    assert.ok(!Object.keys(probe.env).some((name) => name.startsWith('ULTRAPLAN_')), Object.keys(probe.env).join(' '));
    assert.ok(!JSON.stringify(probe).includes(database), 'the database URL reached the attacker');
    assert.ok(!JSON.stringify(probe).includes(victimSecret), "the victim's code reached the attacker");
    // The model key: a stand-in in its environment, the key in nothing it read (its own /proc, the
    // sandbox's first process, the key file), nor in the worker's environment or command line.
    assert.match(probe.env.ANTHROPIC_API_KEY ?? '', /^ultraplan-held-key-/);
    assert.equal(probe.env.ANTHROPIC_BASE_URL, 'http://api.anthropic.com');
    assert.equal(probe.read['/proc/self/environ']?.ok, true, 'the attacker reads its own environment');
    assert.deepEqual(probe.read[keyFile], { ok: false, code: 'ENOENT' });
    assert.ok(!JSON.stringify(probe).includes(modelKey), 'the model key reached the attacker');
    for (const file of ['environ', 'cmdline'])
      assert.ok(!readFileSync(`/proc/${workerPid}/${file}`, 'utf8').includes(modelKey), `the worker's ${file}`);
  });
});
