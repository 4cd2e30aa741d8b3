// The local session service as the extension starts it (serviceLauncher.ts, LocalService: the
// window's ultraplan.localService.sandbox and the bubblewrap it found), a real detached service
// (dist/server.mjs) running the fake ACP agent. Sandboxed ("auto" on this Linux): an attacking
// agent cannot read another session's workspace or HOME, the service's state folder or its
// /proc, and writes its workspace only once its plan is approved. "off" runs agents with the
// person's permissions; a window asking for another choice than the running service's is told
// and restarts it; a machine without bubblewrap runs agents unsandboxed and says why, once.
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectOrStartService, type ServiceConnection } from '../../../src/client/localService/serviceLauncher';
import { LocalService } from '../../../src/client/localService/localService';
import {
  describeSandboxMismatch,
  describeServiceSandbox,
  sandboxMismatch,
  sandboxNotice,
} from '../../../src/client/localService/windowEnvironment';
import { findBubblewrap } from '../../../src/core/node/bubblewrap';
import { controlResponseEvent } from '../../../src/core/protocol';
import type { AgentLaunch } from '../../../src/core/agentLaunch';
import type { SessionsClient } from '../../../src/client/sessionsClient';
import { fakeAgentCommand, fakeAgentProgram } from '../../support/fakeAcpAgent';
import type { AgentProbe } from '../../support/agentProbe';
import { isAlive } from '../../support/processes';
import { waitFor } from '../../support/wait';
import { cleanUpServices, clientOf, createSession, launcherOptions, serviceDir } from './serviceKit';

type StoredEvent = Record<string, unknown> & { type?: string };

/** A marker in the window's environment: the service holds it in its /proc/<pid>/environ. */
const SERVICE_SECRET = `service-secret-${Date.now()}`;
const CLAUDE_MODES = {
  currentModeId: 'default',
  availableModes: [
    { id: 'default', name: 'Manual' },
    { id: 'plan', name: 'Plan Mode' },
  ],
};
const PLAN = '# Attack\n\n1. Write DONE.md';
const EXIT_PLAN = { toolCallId: 'exit-1', title: 'Ready to code?', kind: 'switch_mode', rawInput: { plan: PLAN } };

/** Every probe the fake agent reported, in order (one per sandbox it ran in). */
function probesOf(events: readonly StoredEvent[]): AgentProbe[] {
  const found: AgentProbe[] = [];
  for (const event of events) {
    if (event.type !== 'assistant') continue;
    const content = (event.message as { content?: Array<{ text?: string }> } | undefined)?.content ?? [];
    for (const block of content) {
      const at = block.text?.indexOf('PROBE ') ?? -1;
      if (block.text && at >= 0) found.push(JSON.parse(firstObject(block.text.slice(at + 'PROBE '.length))) as AgentProbe);
    }
  }
  return found;
}

/** The agent's question to the reviewer (its plan), not the client's own mode request. */
function isPlanRequest(event: StoredEvent): boolean {
  return event.type === 'control_request' && (event.request as { subtype?: string } | undefined)?.subtype === 'can_use_tool';
}

/** The id the service keeps a session under (its folders' names): `session_X` for the API's `cse_X`. */
function storedId(id: string): string {
  return id.replace(/^cse_/, 'session_');
}

/** The JSON object a text starts with (the message may go on with the agent's next chunk). */
function firstObject(text: string): string {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(0, i + 1);
  }
  return text;
}

async function eventsOf(client: SessionsClient, id: string): Promise<StoredEvent[]> {
  return (await client.readEvents(id, null)).events as StoredEvent[];
}

function waitForEvents(client: SessionsClient, id: string, until: (events: StoredEvent[]) => boolean, message: string) {
  return waitFor(() => eventsOf(client, id), { message, timeoutMs: 45_000, until });
}

describe('local session service started by the extension: each agent in a sandbox of its own', function () {
  this.timeout(120_000);
  let root: string;
  const bwrap = findBubblewrap();

  before(function () {
    if (process.platform !== 'linux') this.skip();
    assert.ok(bwrap, 'this Linux machine has bubblewrap (npm run setup unpacks it)');
  });
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-sandboxed-service-'));
  });
  afterEach(async () => {
    await cleanUpServices();
    await rm(root, { recursive: true, force: true });
  });

  /** A workspace of its own with a scenario for the fake agent, and the session's launch. */
  function workspaceWith(name: string, scenario: unknown): { workspace: string; launch: AgentLaunch } {
    const workspace = path.join(root, name);
    mkdirSync(workspace);
    writeFileSync(path.join(workspace, 'README.md'), `the code of ${name}\n`);
    // In the workspace: the one folder of the test's the sandbox shows.
    const file = path.join(workspace, 'scenario.json');
    writeFileSync(file, JSON.stringify(scenario));
    const argv = fakeAgentCommand(file, '').slice(0, 3);
    return {
      workspace,
      launch: { kind: 'acp', argv, cwd: workspace, label: `Fake (${name})`, afterApproval: 'default', outsideAccess: 'ask' },
    };
  }

  function window(sandbox: 'auto' | 'off', bwrapPath = bwrap, dir = serviceDir()) {
    return launcherOptions(dir, '1.0.0', {
      env: { ...process.env, ULTRAPLAN_TEST_SECRET: SERVICE_SECRET },
      sandbox: { mode: sandbox, bwrap: bwrapPath },
    });
  }

  it("'auto': the agent sees neither another session's folders, the service's state nor its /proc, and writes its workspace only once approved", async () => {
    const connection = await connectOrStartService(window('auto'));
    assert.deepEqual(connection.status.sandbox, { mode: 'auto', sandboxed: true });
    const servicePid = connection.status.pid;
    const cmdline = readFileSync(`/proc/${servicePid}/cmdline`, 'utf8').split('\0');
    assert.equal(cmdline[cmdline.indexOf('--sandbox') + 1], 'auto');
    assert.equal(cmdline[cmdline.indexOf('--sandbox-bwrap') + 1], bwrap, 'the service is handed the bubblewrap the window found');
    const servicePath = /(?:^|\0)PATH=([^\0]*)/.exec(readFileSync(`/proc/${servicePid}/environ`, 'utf8'))?.[1] ?? '';
    assert.ok(!servicePath.split(':').includes(path.dirname(bwrap as string)), `bubblewrap is not put on PATH: ${servicePath}`);
    assert.ok(readFileSync(`/proc/${servicePid}/environ`, 'utf8').includes(SERVICE_SECRET), 'the service holds the marker');
    const client = clientOf(connection);

    // The victim: another session at work in its own folder.
    const victim = workspaceWith('victim', { modes: CLAUDE_MODES, turns: [[{ chunk: 'Reading.' }, { waitForCancel: true }]] });
    const victimId = await createSession(client, victim.launch);
    await waitForEvents(client, victimId, (events) => events.some((e) => e.subtype === 'init'), 'the victim agent up');
    const victimHome = path.join(connection.place.dataDir, 'sandboxes', storedId(victimId), 'home');
    assert.ok(existsSync(victimHome), `the victim's sandbox HOME ${victimHome}`);
    writeFileSync(path.join(victimHome, 'credentials'), 'the victim agent login\n');
    const victimJournal = path.join(connection.place.dataDir, 'sessions', storedId(victimId));
    assert.ok(existsSync(victimJournal), `the victim's journal ${victimJournal}`);
    assert.ok(existsSync(connection.place.paths.tokenFile), 'the token file');

    const attacker = workspaceWith('attacker', {
      agentInfo: { name: 'fake-claude-agent-acp', version: '0.101.0' },
      modes: CLAUDE_MODES,
      turns: [
        [
          {
            probe: {
              read: [
                path.join(victim.workspace, 'README.md'),
                path.join(victimHome, 'credentials'),
                connection.place.paths.tokenFile,
                `/proc/${servicePid}/environ`,
                `/proc/${servicePid}/cmdline`,
                '{{cwd}}/README.md',
              ],
              list: [connection.place.paths.stateDir, victimJournal, '/proc'],
              write: ['{{cwd}}/PLANNED.md'],
            },
          },
          { toolCall: { ...EXIT_PLAN, status: 'pending' } },
          {
            permission: {
              toolCall: EXIT_PLAN,
              options: [
                { optionId: 'default', name: 'Yes, and manually approve edits', kind: 'allow_once' },
                { optionId: 'plan', name: 'No, keep planning', kind: 'reject_once' },
              ],
            },
            then: { '*': [{ chunk: 'Answered.' }] },
          },
        ],
      ],
      routes: [{ promptIncludes: ['Carry it out now'], steps: [{ probe: { write: ['{{cwd}}/DONE.md'] } }, { chunk: 'Done.' }] }],
    });
    const attackerId = await createSession(client, attacker.launch);
    const planned = await waitForEvents(
      client,
      attackerId,
      (events) => probesOf(events).length > 0 && events.some(isPlanRequest),
      'the attacker probing, then its plan',
    );
    const [probe] = probesOf(planned);
    assert.ok(probe, `the attacker probed: ${JSON.stringify(planned.at(-1))}`);
    const dump = JSON.stringify(probe);

    // Its own workspace it reads; the other session's folders and the service's do not exist for it.
    assert.equal(probe.read[path.join(attacker.workspace, 'README.md')]?.ok, true, JSON.stringify(probe.read));
    assert.deepEqual(probe.read[path.join(victim.workspace, 'README.md')], { ok: false, code: 'ENOENT' });
    assert.deepEqual(probe.read[path.join(victimHome, 'credentials')], { ok: false, code: 'ENOENT' });
    assert.deepEqual(probe.read[connection.place.paths.tokenFile], { ok: false, code: 'ENOENT' });
    assert.equal(probe.list[victimJournal]?.ok, false, `the victim's journal: ${JSON.stringify(probe.list[victimJournal])}`);
    const stateListed = probe.list[connection.place.paths.stateDir];
    assert.ok(!stateListed?.ok || !(stateListed.value as string[]).some((name) => name !== 'data-1.0.0'), JSON.stringify(stateListed));
    // Its own PID namespace: the service is not there (or that pid is one of its own processes).
    const ownPids = (probe.list['/proc']?.value as string[]).filter((name) => /^\d+$/.test(name)).map(Number);
    assert.ok(ownPids.length > 0 && ownPids.every((pid) => pid < 20), `only the sandbox's own processes: ${ownPids.join(' ')}`);
    for (const file of [`/proc/${servicePid}/environ`, `/proc/${servicePid}/cmdline`]) {
      const outcome = probe.read[file];
      assert.ok(!outcome?.ok || !String(outcome.value).includes('server.mjs'), `${file}: ${JSON.stringify(outcome)}`);
    }
    assert.ok(!dump.includes(SERVICE_SECRET), "the service's environment reached the agent");
    assert.ok(!dump.includes('the code of victim') && !dump.includes('victim agent login'), "the victim's files reached the agent");
    assert.equal(probe.env.HOME, path.join(connection.place.dataDir, 'sandboxes', storedId(attackerId), 'home'));
    // Read-only while it plans, by the kernel.
    assert.deepEqual(probe.write[path.join(attacker.workspace, 'PLANNED.md')], { ok: false, code: 'EROFS' });
    assert.equal(existsSync(path.join(attacker.workspace, 'PLANNED.md')), false);

    // Approved: a new sandbox, its workspace writable.
    const request = planned.find(isPlanRequest) as StoredEvent;
    await client.sendEvents(attackerId, [
      controlResponseEvent(String(request.request_id), { behavior: 'allow', updatedInput: { plan: PLAN } }),
    ]);
    const carried = await waitForEvents(client, attackerId, (events) => probesOf(events).length >= 2, 'the approved plan carried out');
    const executing = probesOf(carried)[1] as AgentProbe;
    assert.deepEqual(executing.write[path.join(attacker.workspace, 'DONE.md')], { ok: true });
    assert.equal(readFileSync(path.join(attacker.workspace, 'DONE.md'), 'utf8'), 'written by a hostile agent\n');
    assert.ok(executing.pid < 20, `still in a PID namespace of its own (pid ${executing.pid})`);
  });

  it("'auto': the agent reads and refreshes its own saved login in the person's HOME, and sees nothing else of that HOME", async () => {
    // The person's HOME, as `claude login` leaves it on Linux, with a key beside it.
    const personHome = path.join(root, 'person-home');
    mkdirSync(path.join(personHome, '.claude'), { recursive: true });
    mkdirSync(path.join(personHome, '.ssh'));
    const credentials = path.join(personHome, '.claude', '.credentials.json');
    const login = JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-person', refreshToken: 'sk-ant-ort01-person' } });
    writeFileSync(credentials, login, { mode: 0o600 });
    writeFileSync(path.join(personHome, '.ssh', 'id_rsa'), 'PRIVATE KEY of the person\n', { mode: 0o600 });
    writeFileSync(path.join(personHome, '.claude', 'settings.json'), '{"secret":"settings of the person"}\n');
    // The fake agent under the Claude adapter's program name: the catalogue's Claude entry is its own.
    mkdirSync(path.join(root, 'claude-install'));
    const program = path.join(root, 'claude-install', 'claude-agent-acp');
    symlinkSync(fakeAgentProgram(), program);
    const { CLAUDE_CONFIG_DIR: _unused, ...env } = process.env;
    const options = launcherOptions(serviceDir(), '1.0.0', { env: { ...env, HOME: personHome }, sandbox: { mode: 'auto', bwrap } });
    const connection = await connectOrStartService(options);
    assert.deepEqual(connection.status.sandbox, { mode: 'auto', sandboxed: true });
    const client = clientOf(connection);
    const claudeLaunch = (name: string, scenario: unknown): { workspace: string; launch: AgentLaunch } => {
      const { workspace } = workspaceWith(name, scenario);
      const [node] = fakeAgentCommand(path.join(workspace, 'scenario.json'), '');
      const argv = [node as string, program, path.join(workspace, 'scenario.json')];
      return {
        workspace,
        launch: { kind: 'acp', argv, cwd: workspace, label: `Claude (${name})`, afterApproval: 'default', outsideAccess: 'ask' },
      };
    };

    const victim = claudeLaunch('victim', { modes: CLAUDE_MODES, turns: [[{ chunk: 'Reading.' }, { waitForCancel: true }]] });
    const victimId = await createSession(client, victim.launch);
    await waitForEvents(client, victimId, (events) => events.some((e) => e.subtype === 'init'), 'the victim agent up');
    const victimHome = path.join(connection.place.dataDir, 'sandboxes', storedId(victimId), 'home');
    writeFileSync(path.join(victimHome, 'history'), 'the victim session history\n');

    const agent = claudeLaunch('agent', {
      modes: CLAUDE_MODES,
      turns: [
        [
          {
            probe: {
              read: [
                '{{home}}/.claude/.credentials.json',
                path.join(personHome, '.ssh', 'id_rsa'),
                '{{home}}/.ssh/id_rsa',
                '{{home}}/.claude/settings.json',
                path.join(personHome, '.claude', '.credentials.json'),
                path.join(victimHome, 'history'),
              ],
              list: ['{{home}}/.claude', personHome],
              write: ['{{home}}/.claude/.credentials.json'],
            },
          },
        ],
      ],
    });
    const id = await createSession(client, agent.launch);
    const [probe] = probesOf(await waitForEvents(client, id, (events) => probesOf(events).length > 0, 'the probe'));
    assert.ok(probe);
    const home = path.join(connection.place.dataDir, 'sandboxes', storedId(id), 'home');
    assert.equal(probe.env.HOME, home, 'a HOME of its own');
    const inside = path.join(home, '.claude', '.credentials.json');
    assert.deepEqual(probe.read[inside], { ok: true, value: login }, "its login, the person's content");
    assert.deepEqual(probe.write[inside], { ok: true }, 'it writes its login (a refreshed token)');
    assert.equal(readFileSync(credentials, 'utf8'), 'written by a hostile agent\n', "the write reached the person's file");
    assert.deepEqual(probe.list[path.join(home, '.claude')], { ok: true, value: ['.credentials.json'] }, 'the one file, not its folder');
    for (const hidden of [
      path.join(personHome, '.ssh', 'id_rsa'),
      path.join(home, '.ssh', 'id_rsa'),
      path.join(home, '.claude', 'settings.json'),
      path.join(personHome, '.claude', '.credentials.json'),
      path.join(victimHome, 'history'),
    ])
      assert.deepEqual(probe.read[hidden], { ok: false, code: 'ENOENT' }, hidden);
    assert.deepEqual(probe.list[personHome], { ok: false, code: 'ENOENT' });
    const dump = JSON.stringify(probe);
    assert.ok(!dump.includes('PRIVATE KEY') && !dump.includes('settings of the person') && !dump.includes('victim session history'));
  });

  it("'off': the service runs its agents with the person's permissions, and says so", async () => {
    const connection = await connectOrStartService(window('off'));
    assert.deepEqual(connection.status.sandbox, { mode: 'off', sandboxed: false });
    const cmdline = readFileSync(`/proc/${connection.status.pid}/cmdline`, 'utf8').split('\0');
    assert.equal(cmdline[cmdline.indexOf('--sandbox') + 1], 'off');
    assert.ok(!cmdline.includes('--sandbox-bwrap'), 'no bubblewrap handed over when off');
    const other = path.join(root, 'elsewhere.txt');
    writeFileSync(other, 'outside any workspace\n');
    const agent = workspaceWith('plain', {
      modes: CLAUDE_MODES,
      turns: [[{ probe: { read: [other, `/proc/${connection.status.pid}/cmdline`], write: ['{{cwd}}/PLANNED.md'] } }]],
    });
    const client = clientOf(connection);
    const id = await createSession(client, agent.launch);
    const [probe] = probesOf(await waitForEvents(client, id, (events) => probesOf(events).length > 0, 'the probe'));
    assert.ok(probe);
    assert.equal(probe.read[other]?.ok, true, 'it reads outside its workspace');
    assert.match(String(probe.read[`/proc/${connection.status.pid}/cmdline`]?.value), /server\.mjs/, "it reads the service's /proc");
    assert.ok(probe.pid > 20, `in the service's PID namespace (pid ${probe.pid})`);
    assert.equal(
      describeServiceSandbox(connection.status),
      'Agents run unsandboxed, with your permissions: ultraplan.localService.sandbox is "off".',
    );
    assert.equal(sandboxNotice(connection.status, []).notice, undefined, 'a choice the person made is not a notice');
  });

  it('a window asking for another sandbox choice than the running service is told, and restarts it as it asks', async () => {
    const dir = serviceDir();
    const first = await connectOrStartService(window('off', bwrap, dir));
    const service = new LocalService(window('auto', bwrap, dir));
    const connection: ServiceConnection = await service.connect();
    assert.equal(connection.status.pid, first.status.pid, 'the window reaches the running service');
    const mismatch = sandboxMismatch(connection.status, 'auto');
    assert.deepEqual(mismatch, { running: 'off', wanted: 'auto', sandboxed: false, liveSessions: 0 });
    assert.equal(
      describeSandboxMismatch(mismatch),
      'The Ultraplan session service was started with ultraplan.localService.sandbox "off" (its agents run unsandboxed, with your permissions), and this window asks for "auto". Restart it to run this window\'s agents as this window asks.',
    );
    assert.equal(sandboxMismatch(connection.status, 'off'), null, 'the same choice is no mismatch');

    const outcome = await service.restart();
    assert.ok(outcome.restarted);
    assert.equal(isAlive(first.status.pid), false, 'the old service stopped');
    assert.deepEqual(outcome.connection.status.sandbox, { mode: 'auto', sandboxed: true });
    assert.equal(sandboxMismatch(outcome.connection.status, 'auto'), null);
  });

  it('without bubblewrap the service runs agents unsandboxed, says why in its status and log, and the window tells it once', async () => {
    const missing = path.join(root, 'no-such-dir', 'bwrap');
    const connection = await connectOrStartService(window('auto', missing));
    const sandbox = connection.status.sandbox;
    assert.equal(sandbox?.mode, 'auto');
    assert.equal(sandbox?.sandboxed, false);
    assert.match(sandbox?.reason ?? '', new RegExp(`bubblewrap \\(bwrap\\) is not at ${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    assert.match(sandbox?.reason ?? '', /apt-get install bubblewrap socat/);
    assert.match(readFileSync(connection.place.logFile, 'utf8'), /agents run unsandboxed: bubblewrap \(bwrap\) is not at /);

    const first = sandboxNotice(connection.status, []);
    assert.equal(first.warning, true);
    assert.match(
      first.notice ?? '',
      /^Ultraplan: agents run without a sandbox on this machine, with your permissions\. bubblewrap \(bwrap\) is not at /,
    );
    assert.deepEqual(first.told, [sandbox?.reason]);
    const again = sandboxNotice(connection.status, first.told);
    assert.equal(again.notice, undefined, 'told once, not on every connection');
    assert.equal(again.warning, true, 'still in the log');
    assert.match(again.line, /^Agents run unsandboxed, with your permissions: bubblewrap/);
  });
});
