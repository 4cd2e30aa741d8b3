// A reviewer's sandbox makes the files the review withholds unreadable: the agent's own tools (not
// ACP's fs calls) read .env, a symlink to it, a key in another case and the git folder, inside
// bubblewrap and outside it with the same arguments. Outside, every read finds the secret, so a
// refused read inside is the sandbox's doing.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { prepareSandboxedSpawn, sandboxSupport, type SandboxTools } from '../../../src/agents/sandbox';
import { hiddenPaths } from '../../../src/agents/sandbox/hiddenPaths';
import { isWithheldFromReviewers } from '../../../src/core/review/scope';

const PROBE = path.join(__dirname, 'fixtures', 'probe.mjs');
const SECRET = `token-only-outside-${process.pid}`;

interface StepResult {
  ok: boolean;
  code?: string;
  text?: string;
  entries?: string[];
}

function collect(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<StepResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      try {
        resolve(JSON.parse(out) as StepResult[]);
      } catch {
        reject(new Error(`probe ended ${code} without results; stderr: ${err}`));
      }
    });
  });
}

describe("agent sandbox: a reviewer's withheld files are unreadable inside (bubblewrap, real processes)", function () {
  this.timeout(60_000);
  let root = '';
  let tools: SandboxTools;

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    const support = sandboxSupport();
    assert.ok(support.supported, `this Linux machine must sandbox agents: ${support.supported ? '' : support.reason}`);
    tools = support.tools;
    root = await mkdtemp(path.join(tmpdir(), 'ultraplan-hidden-test-'));
  });
  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('.env, a symlink to it, KEY.PEM, deploy/.kube/config and .git are unreadable inside; README reads whole; all read the secret outside', async () => {
    const workspace = path.join(root, 'workspace');
    const [home, tmp] = [path.join(root, 'home'), path.join(root, 'tmp')];
    for (const dir of [workspace, home, tmp, path.join(workspace, '.git'), path.join(workspace, 'deploy', '.kube')])
      mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(workspace, 'README.md'), 'plain\n');
    writeFileSync(path.join(workspace, '.env'), SECRET);
    writeFileSync(path.join(workspace, 'KEY.PEM'), SECRET);
    writeFileSync(path.join(workspace, 'deploy', '.kube', 'config'), SECRET);
    writeFileSync(path.join(workspace, '.git', 'config'), SECRET);
    symlinkSync('.env', path.join(workspace, 'notes.txt'));
    const steps = [
      { op: 'read', path: path.join(workspace, '.env') },
      { op: 'read', path: path.join(workspace, 'notes.txt') },
      { op: 'read', path: path.join(workspace, 'KEY.PEM') },
      { op: 'read', path: path.join(workspace, 'deploy', '.kube', 'config') },
      { op: 'read', path: path.join(workspace, '.git', 'config') },
      { op: 'read', path: path.join(workspace, 'README.md') },
    ];
    const free = await collect(process.execPath, [PROBE, JSON.stringify(steps)], process.env, workspace);
    assert.deepEqual(
      free.map((r) => r.text),
      [SECRET, SECRET, SECRET, SECRET, SECRET, 'plain\n'],
    );

    const hidden = await hiddenPaths(workspace, isWithheldFromReviewers);
    assert.deepEqual(hidden.hiddenFolders, [path.join(workspace, '.git')]);
    const spec = {
      sessionId: 'r1',
      workspace,
      mode: 'planning' as const,
      home,
      tmp,
      allowedHosts: [],
      readOnlyPaths: [path.dirname(PROBE)],
    };
    const prepared = await prepareSandboxedSpawn({ ...spec, ...hidden }, [process.execPath, PROBE, JSON.stringify(steps)], {}, tools);
    try {
      const results = await collect(prepared.command, prepared.args, prepared.env, prepared.cwd);
      // /dev/null bound over a file of a nodev mount opens as EACCES; .git is an empty folder inside.
      assert.deepEqual(
        results.map((r) => r.text ?? r.code),
        ['EACCES', 'EACCES', 'EACCES', 'EACCES', 'ENOENT', 'plain\n'],
        JSON.stringify(results),
      );
    } finally {
      await prepared.cleanup();
    }
  });
});
