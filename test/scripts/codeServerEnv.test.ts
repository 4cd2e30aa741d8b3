import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { codeServerEnv } from '../../scripts/code-server-config.cjs';

describe('codeServerEnv: the environment code-server and the extension host run with', () => {
  const join = (...dirs: string[]) => dirs.join(path.delimiter);

  it("drops npm's script PATH entries, so the project's dev tools are not taken for installed agents", () => {
    const env = codeServerEnv({
      PATH: join(
        '/work/main/node_modules/.bin',
        '/work/node_modules/.bin',
        '/node_modules/.bin',
        '/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin',
        '/usr/local/bin',
        '/usr/bin',
        '/opt/tools/node_modules/.binaries',
      ),
      HOME: '/root',
    });
    assert.equal(env.PATH, join('/usr/local/bin', '/usr/bin', '/opt/tools/node_modules/.binaries'));
    assert.equal(env.HOME, '/root');
  });

  it('drops PORT (code-server would prefer it over the port we chose) and leaves the caller env as it was', () => {
    const original = { PORT: '8080', PATH: join('/a/node_modules/.bin', '/usr/bin') };
    const env = codeServerEnv(original);
    assert.equal(env.PORT, undefined);
    assert.equal(env.PATH, '/usr/bin');
    assert.deepEqual(original, { PORT: '8080', PATH: join('/a/node_modules/.bin', '/usr/bin') });
  });
});
