// Known agents by the packages people install (pinned), and installing one: the Node it needs,
// progress while npm works, and a failure that names its cause and the fix.
import { strict as assert } from 'node:assert';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  describeInstallFailure,
  fetchAgentForNpx,
  installAgent,
  nodeProblem,
  nodeSatisfies,
} from '../../src/agents/catalogue/agentInstall';
import { KNOWN_AGENTS, detectKnownAgents, resolveAgentCommand } from '../../src/agents/catalogue/knownAgents';

const codex = KNOWN_AGENTS.find((agent) => agent.id === 'codex')!;

describe('known agents and their install', () => {
  it('offers the known agents by their npm packages, pinned, with the exact install command and the Node each needs', () => {
    assert.deepEqual(
      KNOWN_AGENTS.map((agent) => agent.installCommand),
      [
        'npm install -g @agentclientprotocol/claude-agent-acp@0.101.0',
        'npm install -g @google/gemini-cli@0.61.0',
        'npm install -g @agentclientprotocol/codex-acp@2.6.0',
        'npm install -g @qwen-code/qwen-code@0.24.4',
        'npm install -g @github/copilot@1.0.102',
        'npm install -g opencode-ai@1.18.33',
      ],
    );
    assert.deepEqual(codex.npx.argv, ['npx', '-y', '@agentclientprotocol/codex-acp@2.6.0']);
    assert.deepEqual(KNOWN_AGENTS.find((agent) => agent.id === 'gemini')?.installed.argv, ['gemini', '--acp']);
    assert.match(KNOWN_AGENTS[0]!.installHint, /needs Node\.js >=22/);
    // The old adapter without plan mode is never offered.
    assert.ok(KNOWN_AGENTS.every((agent) => !agent.npx.argv.join(' ').includes('@zed-industries')));
  });

  it('detects a missing agent with its install command, and an installed one on PATH', async () => {
    const bin = await mkdtemp(path.join(tmpdir(), 'ultraplan-path-'));
    try {
      const none = detectKnownAgents({ PATH: bin });
      assert.equal(none.find((agent) => agent.id === 'codex')?.availability, 'missing');
      assert.match(
        none.find((agent) => agent.id === 'codex')?.installHint ?? '',
        /^npm install -g @agentclientprotocol\/codex-acp@2\.6\.0 \(needs Node\.js >=20/,
      );
      await writeFile(path.join(bin, 'codex-acp'), '#!/bin/sh\n');
      await chmod(path.join(bin, 'codex-acp'), 0o755);
      const found = detectKnownAgents({ PATH: bin }).find((agent) => agent.id === 'codex');
      assert.equal(found?.availability, 'installed');
      assert.deepEqual(found?.argv, ['codex-acp']);
      assert.equal(resolveAgentCommand('npx -y @agentclientprotocol/codex-acp@2.6.0', { PATH: bin }).label, 'Codex (ACP)');
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('checks the Node version against the package engines', () => {
    assert.ok(nodeSatisfies('v22.3.0', '>=22'));
    assert.ok(!nodeSatisfies('v20.19.0', '>=22'));
    assert.ok(nodeSatisfies('v20.0.0', '>=20'));
    assert.ok(!nodeSatisfies('v18.20.1', '>=20'));
    assert.equal(nodeProblem(codex, 'v20.1.0'), undefined);
    assert.match(nodeProblem(codex, 'v18.2.0') ?? '', /needs Node\.js >=20, but `node` on PATH is v18\.2\.0/);
    assert.match(nodeProblem(codex, undefined) ?? '', /no `node` was found on PATH/);
  });

  it('names the cause and the fix of a failed install, never "Internal error"', () => {
    const cases: Array<[string, RegExp]> = [
      ['npm error code EACCES\nnpm error syscall mkdir', /permission denied.*npm config set prefix ~\/\.npm-global/],
      ['npm error code ENOTFOUND\nnpm error network request failed', /could not reach its registry \(network\)/],
      ['npm error code ETARGET\nnpm error notarget No matching version found', /registry has no @agentclientprotocol\/codex-acp@2\.6\.0/],
      ['npm warn EBADENGINE Unsupported engine', /needs Node\.js >=20/],
      ['something else went wrong', /failed \(exit code 1\)\. Run it in a terminal to see why\.\nnpm said:\nsomething else went wrong/],
    ];
    for (const [output, expected] of cases) {
      const message = describeInstallFailure(codex, output, { code: 1 });
      assert.match(message, expected);
      assert.ok(message.includes(codex.installCommand) || /Run it in a terminal/.test(message));
      assert.doesNotMatch(message, /Internal error|remote/i);
    }
    assert.match(describeInstallFailure(codex, '', { code: null, spawnError: 'spawn npm ENOENT' }), /Could not run npm.*Install Node\.js/);
  });

  describe('installAgent runs npm and reports progress', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'ultraplan-npm-'));
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    /** A stand-in npm that prints what npm prints at --loglevel http, then exits with `code`. */
    async function npmScript(lines: string[], code: number): Promise<string> {
      const file = path.join(dir, 'npm');
      await writeFile(
        file,
        `#!${process.execPath}\nconst fs = require('node:fs');\nfs.writeFileSync(${JSON.stringify(path.join(dir, 'args.json'))}, JSON.stringify(process.argv.slice(2)));\n` +
          `for (const line of ${JSON.stringify(lines)}) process.stderr.write(line + '\\n');\nprocess.exit(${code});\n`,
      );
      await chmod(file, 0o755);
      return file;
    }

    it('passes the pinned package and reports downloads and the result', async () => {
      const fetches = Array.from({ length: 10 }, (_, i) => `npm http fetch GET 200 https://registry.npmjs.org/p${i} 12ms (cache miss)`);
      const npm = await npmScript([...fetches, 'added 25 packages in 9s'], 0);
      const progress: string[] = [];
      const result = await installAgent(codex, { npm, onProgress: (message) => progress.push(message) });
      assert.deepEqual(result, { ok: true });
      assert.deepEqual(progress, ['downloaded 1 package', 'downloaded 5 packages', 'downloaded 10 packages', 'added 25 packages in 9s']);
      const { readFile } = await import('node:fs/promises');
      const args = JSON.parse(await readFile(path.join(dir, 'args.json'), 'utf8')) as string[];
      assert.deepEqual(args.slice(0, 3), ['install', '-g', '@agentclientprotocol/codex-acp@2.6.0']);
    });

    it("fetches an agent into npx's cache with progress: npm exec of the pinned package, running nothing of it", async () => {
      const fetches = Array.from({ length: 5 }, (_, i) => `npm http fetch GET 200 https://registry.npmjs.org/p${i}.tgz 40ms (cache miss)`);
      const npm = await npmScript(fetches, 0);
      const progress: string[] = [];
      const result = await fetchAgentForNpx(codex, { npm, onProgress: (message) => progress.push(message) });
      assert.deepEqual(result, { ok: true });
      assert.deepEqual(progress, ['downloaded 1 package', 'downloaded 5 packages']);
      const { readFile } = await import('node:fs/promises');
      const args = JSON.parse(await readFile(path.join(dir, 'args.json'), 'utf8')) as string[];
      assert.deepEqual(args, [
        'exec',
        '--yes',
        '--package=@agentclientprotocol/codex-acp@2.6.0',
        '--loglevel',
        'http',
        '--',
        'node',
        '-e',
        '0',
      ]);
      const failed = await fetchAgentForNpx(codex, { npm: await npmScript(['npm error code ENOTFOUND', 'npm error network'], 1) });
      assert.match(!failed.ok ? failed.message : '', /could not reach its registry/);
    });

    it('a failing npm gives the cause and the fix', async () => {
      const npm = await npmScript(['npm error code EACCES', 'npm error path /usr/lib/node_modules'], 243);
      const result = await installAgent(codex, { npm });
      assert.equal(result.ok, false);
      assert.match(!result.ok ? result.message : '', /permission denied/);
    });

    it('a cancelled install says so, with the command to run again', async () => {
      const file = path.join(dir, 'npm');
      await writeFile(file, `#!${process.execPath}\nsetTimeout(() => {}, 30000);\n`);
      await chmod(file, 0o755);
      const abort = new AbortController();
      const pending = installAgent(codex, { npm: file, signal: abort.signal });
      setTimeout(() => abort.abort(), 200);
      const result = await pending;
      assert.equal(result.ok, false);
      assert.match(!result.ok ? result.message : '', /The install was cancelled.*npm install -g @agentclientprotocol\/codex-acp@2\.6\.0/);
    });

    it('no npm at all says Node.js with npm is needed', async () => {
      const result = await installAgent(codex, { npm: path.join(dir, 'no-such-npm') });
      assert.equal(result.ok, false);
      assert.match(!result.ok ? result.message : '', /Could not run npm .*Node\.js >=20 with npm is needed/);
    });
  });
});
