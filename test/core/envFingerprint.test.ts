// The environment fingerprint a local service publishes and a window compares (docs/service.md):
// equal for the same values, the differing names listed, no value anywhere in what it gives out.
import { strict as assert } from 'node:assert';
import { envDifferences, envFingerprint, EnvFingerprintSchema, randomSalt } from '../../src/core/envFingerprint';
import { describeMismatch } from '../../src/client/localService/windowEnvironment';
import { AGENT_ENV_NAMES } from '../../src/agents/catalogue/agentEnvNames';

const KEY = 'sk-ant-secret-value-0123456789';
const base = { PATH: '/usr/bin:/bin', HOME: '/home/ada', ANTHROPIC_API_KEY: KEY, UNRELATED: 'x' };

describe('environment fingerprint', () => {
  it('covers PATH, HOME, the proxies and every catalogue agent key, base URL and own variable', () => {
    for (const name of [
      'PATH',
      'HOME',
      'HTTPS_PROXY',
      'no_proxy',
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_BASE_URL',
      'OPENAI_API_KEY',
      'GEMINI_MODEL',
    ]) {
      assert.ok(AGENT_ENV_NAMES.includes(name), name);
    }
    assert.ok(!AGENT_ENV_NAMES.includes('ULTRAPLAN_SERVER_TOKEN'));
  });

  it('is the same for the same values and salt, whatever else the environment holds', async () => {
    const salt = randomSalt();
    const a = await envFingerprint(base, AGENT_ENV_NAMES, salt);
    const b = await envFingerprint({ ...base, UNRELATED: 'y', TERM: 'xterm' }, AGENT_ENV_NAMES, salt);
    assert.deepEqual(a, b);
    assert.deepEqual(envDifferences(a, b), []);
    EnvFingerprintSchema.parse(a);
    assert.deepEqual(Object.keys(a.variables), ['ANTHROPIC_API_KEY', 'HOME', 'PATH']);
  });

  it('names a changed key, an added one and a removed one, and gives out no value', async () => {
    const salt = randomSalt();
    const service = await envFingerprint(base, AGENT_ENV_NAMES, salt);
    const window = await envFingerprint(
      { PATH: base.PATH, HOME: '/home/other', ANTHROPIC_API_KEY: `${KEY}-new`, OPENAI_API_KEY: 'sk-openai-777' },
      AGENT_ENV_NAMES,
      salt,
    );
    assert.notEqual(service.sha256, window.sha256);
    assert.deepEqual(envDifferences(service, window), ['ANTHROPIC_API_KEY', 'HOME', 'OPENAI_API_KEY']);
    const said =
      JSON.stringify([service, window]) + describeMismatch({ differing: envDifferences(service, window), home: true, liveSessions: 0 });
    for (const value of [KEY, 'sk-openai-777', '/home/ada', '/home/other', '/usr/bin']) assert.ok(!said.includes(value), value);
  });

  it('hashes with the salt: another salt gives other hashes for the same values', async () => {
    const a = await envFingerprint(base, AGENT_ENV_NAMES, randomSalt());
    const b = await envFingerprint(base, AGENT_ENV_NAMES, randomSalt());
    assert.notEqual(a.salt, b.salt);
    assert.notEqual(a.variables.ANTHROPIC_API_KEY, b.variables.ANTHROPIC_API_KEY);
  });

  it('tells a live service apart: it keeps running and says so', () => {
    const text = describeMismatch({ differing: ['ANTHROPIC_API_KEY'], home: false, liveSessions: 2 });
    assert.match(text, /different: ANTHROPIC_API_KEY/);
    assert.match(text, /2 session\(s\) are live on it/);
    assert.doesNotMatch(text, /HOME/);
  });
});
