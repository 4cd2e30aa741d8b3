// `--agent-key-file NAME=FILE`: what a worker holds back from its agents, and the mistakes it refuses.
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../src/service/commandLine';
import { heldKeysFlag } from '../../src/service/heldKeysFlag';
import { tempDir } from '../support/serverProcess';

describe('--agent-key-file', () => {
  const dir = tempDir('ultraplan-held-keys-');
  const keyFile = path.join(dir, 'key');
  writeFileSync(keyFile, 'sk-from-file\n', { mode: 0o400 });
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const refused = (promise: Promise<unknown>, pattern: RegExp) =>
    assert.rejects(promise, (err: unknown) => err instanceof UsageError && pattern.test(err.message));

  it('reads each key from its file, and holds a key variable of the environment too, with a warning', async () => {
    lines.length = 0;
    const held = await heldKeysFlag(
      'w',
      { entries: [`ANTHROPIC_API_KEY=${keyFile}`], sandboxed: true, env: { OPENAI_API_KEY: 'sk-env', PATH: '/bin' } },
      log,
    );
    assert.deepEqual(
      [...held],
      [
        ['ANTHROPIC_API_KEY', 'sk-from-file'],
        ['OPENAI_API_KEY', 'sk-env'],
      ],
    );
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /WARNING: OPENAI_API_KEY is in this process's environment.*--agent-key-file OPENAI_API_KEY=FILE/);
    assert.ok(!lines.join('').includes('sk-env'), 'the warning shows no key');
  });

  it('refuses a malformed entry, a variable no agent reads, a name twice, a name also in the environment, and no sandbox', async () => {
    await refused(heldKeysFlag('w', { entries: ['ANTHROPIC_API_KEY'], sandboxed: true, env: {} }, log), /takes NAME=FILE/);
    await refused(heldKeysFlag('w', { entries: [`DATABASE_URL=${keyFile}`], sandboxed: true, env: {} }, log), /no agent's key variable/);
    await refused(
      heldKeysFlag('w', { entries: [`GEMINI_API_KEY=${keyFile}`, `GEMINI_API_KEY=${keyFile}`], sandboxed: true, env: {} }, log),
      /given twice/,
    );
    await refused(
      heldKeysFlag('w', { entries: [`ANTHROPIC_API_KEY=${keyFile}`], sandboxed: true, env: { ANTHROPIC_API_KEY: 'x' } }, log),
      /both in the environment and in --agent-key-file/,
    );
    await refused(heldKeysFlag('w', { entries: [`ANTHROPIC_API_KEY=${keyFile}`], sandboxed: false, env: {} }, log), /needs the sandbox/);
    await refused(
      heldKeysFlag('w', { entries: [`ANTHROPIC_API_KEY=${path.join(dir, 'missing')}`], sandboxed: true, env: {} }, log),
      /ENOENT/,
    );
  });

  it('refuses a key file others can read (as ssh refuses such a private key), one holding a NAME=value line, and one not a single key', async () => {
    const shared = path.join(dir, 'shared');
    writeFileSync(shared, 'sk-shared\n', { mode: 0o604 });
    await refused(
      heldKeysFlag('w', { entries: [`ANTHROPIC_API_KEY=${shared}`], sandboxed: true, env: {} }, log),
      /--agent-key-file: .*shared can be read by other users \(mode 604\).*chmod 600/,
    );
    const line = path.join(dir, 'line');
    writeFileSync(line, 'OPENAI_API_KEY=sk-line\n', { mode: 0o600 });
    await refused(heldKeysFlag('w', { entries: [`OPENAI_API_KEY=${line}`], sandboxed: true, env: {} }, log), /holds a NAME=value line/);
    const spaced = path.join(dir, 'spaced');
    writeFileSync(spaced, 'sk-one sk-two\n', { mode: 0o600 });
    await refused(heldKeysFlag('w', { entries: [`OPENAI_API_KEY=${spaced}`], sandboxed: true, env: {} }, log), /key alone, on one line/);
    const owned = path.join(dir, 'owned');
    writeFileSync(owned, 'sk-owned\n', { mode: 0o600 });
    const held = await heldKeysFlag('w', { entries: [`OPENAI_API_KEY=${owned}`], sandboxed: true, env: {} }, log);
    assert.equal(held.get('OPENAI_API_KEY'), 'sk-owned');
  });

  it("the local service notes a key of its window's environment it holds back, without the warning", async () => {
    lines.length = 0;
    const held = await heldKeysFlag(
      's',
      { entries: undefined, sandboxed: true, env: { GEMINI_API_KEY: 'g-env' }, fromEnvironment: 'note' },
      log,
    );
    assert.equal(held.get('GEMINI_API_KEY'), 'g-env');
    assert.deepEqual(lines, [
      "s: agents get a stand-in for GEMINI_API_KEY; their sandbox's proxy adds the key on calls to their model API",
    ]);
  });

  it('unsandboxed, without the flag, holds nothing (the agent runs with the environment it always had)', async () => {
    assert.equal((await heldKeysFlag('w', { entries: undefined, sandboxed: false, env: { ANTHROPIC_API_KEY: 'x' } }, log)).size, 0);
  });
});
