// Which of the person's login files a session's agent is shown in its sandbox, and where: the
// catalogue's files of that agent that exist (moved by its folder variable when set), each at the
// same place below the sandbox's HOME; none for a command the catalogue does not know.
import { strict as assert } from 'node:assert';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentEntry } from '../../../src/agents/catalogue/knownAgents';
import { bwrapArguments } from '../../../src/agents/sandbox/bwrapArgs';
import { loginFileBinds, loginHosts } from '../../../src/agents/sandbox/loginFiles';

describe('loginFileBinds: the agent sees its own saved login', () => {
  let root: string;
  let person: string;
  const inside = '/srv/sandboxes/s1/home';
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-login-files-'));
    person = path.join(root, 'home');
    mkdirSync(path.join(person, '.claude'), { recursive: true });
    mkdirSync(path.join(person, '.gemini'), { recursive: true });
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("binds Claude's .credentials.json from ~/.claude, at ~/.claude below the sandbox's HOME", () => {
    writeFileSync(path.join(person, '.claude', '.credentials.json'), '{}');
    assert.deepEqual(loginFileBinds(agentEntry('claude'), {}, person, inside), [
      { source: path.join(person, '.claude', '.credentials.json'), target: path.join(inside, '.claude', '.credentials.json') },
    ]);
  });

  it('reads it where CLAUDE_CONFIG_DIR says, and shows it where the agent looks inside (the variable is not passed in)', () => {
    const config = path.join(root, 'elsewhere');
    mkdirSync(config);
    writeFileSync(path.join(config, '.credentials.json'), '{}');
    writeFileSync(path.join(person, '.claude', '.credentials.json'), '{"not":"this one"}');
    assert.deepEqual(loginFileBinds(agentEntry('claude'), { CLAUDE_CONFIG_DIR: config }, person, inside), [
      { source: path.join(config, '.credentials.json'), target: path.join(inside, '.claude', '.credentials.json') },
    ]);
  });

  it('leaves out files that do not exist and folders in their place; binds a symlink as the file it names', () => {
    mkdirSync(path.join(person, '.gemini', 'oauth_creds.json'));
    assert.deepEqual(loginFileBinds(agentEntry('gemini'), {}, person, inside), []);
    const real = path.join(root, 'accounts.json');
    writeFileSync(real, '{}');
    symlinkSync(real, path.join(person, '.gemini', 'google_accounts.json'));
    assert.deepEqual(loginFileBinds(agentEntry('gemini'), {}, person, inside), [
      { source: real, target: path.join(inside, '.gemini', 'google_accounts.json') },
    ]);
    assert.deepEqual(loginFileBinds(agentEntry('claude'), {}, person, inside), [], 'no login saved');
  });

  it("with a login bound, its egress adds the hosts that login needs (Claude's token endpoint); none without one", () => {
    assert.deepEqual(loginHosts(agentEntry('claude'), []), []);
    writeFileSync(path.join(person, '.claude', '.credentials.json'), '{}');
    const binds = loginFileBinds(agentEntry('claude'), {}, person, inside);
    assert.deepEqual(loginHosts(agentEntry('claude'), binds), ['platform.claude.com:443']);
    assert.deepEqual(loginHosts(undefined, binds), []);
  });

  it('a command the catalogue does not know gets no login of anyone', () => {
    writeFileSync(path.join(person, '.claude', '.credentials.json'), '{}');
    assert.deepEqual(loginFileBinds(undefined, {}, person, inside), []);
  });

  it("bubblewrap binds each over the HOME's mount, and refuses a target outside that HOME", () => {
    const spec = {
      sessionId: 's1',
      workspace: '/srv/ws',
      mode: 'planning' as const,
      home: inside,
      tmp: '/srv/sandboxes/s1/tmp',
      allowedHosts: [],
      loginFiles: [{ source: '/root/.claude/.credentials.json', target: `${inside}/.claude/.credentials.json` }],
    };
    const layout = { readOnly: ['/usr'], symlinks: [], disableUserns: false, socat: '/usr/bin/socat' };
    const args = bwrapArguments(spec, layout, undefined, ['/usr/bin/true']);
    const home = args.findIndex((arg, i) => arg === '--bind' && args[i + 1] === inside);
    const login = args.indexOf('/root/.claude/.credentials.json');
    assert.ok(home >= 0 && login > home, args.join(' '));
    assert.deepEqual(args.slice(login - 1, login + 2), [
      '--bind',
      '/root/.claude/.credentials.json',
      `${inside}/.claude/.credentials.json`,
    ]);
    assert.throws(
      () =>
        bwrapArguments({ ...spec, loginFiles: [{ source: '/root/.ssh/id_rsa', target: '/root/.ssh/id_rsa' }] }, layout, undefined, [
          '/usr/bin/true',
        ]),
      /not inside the sandbox's HOME/,
    );
  });
});
