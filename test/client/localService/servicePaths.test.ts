// Where the service lives on each platform, the names versions get, and how versions are ordered.
import { strict as assert } from 'node:assert';
import { checkServiceVersion, compareVersions, servicePaths, servicePlace, versionOfDataDir } from '../../../src/core/node/servicePaths';

describe('service paths and versions', () => {
  it('Linux: the runtime folder under XDG_RUNTIME_DIR, else a per-uid folder in the temp folder; state under XDG_STATE_HOME or ~/.local/state', () => {
    const withXdg = servicePaths({
      env: { XDG_RUNTIME_DIR: '/run/user/1000' },
      platform: 'linux',
      uid: 1000,
      home: '/home/me',
      tmpdir: '/tmp',
    });
    assert.deepEqual(withXdg, {
      runtimeDir: '/run/user/1000/ultraplan',
      stateDir: '/home/me/.local/state/ultraplan/service',
      tokenFile: '/run/user/1000/ultraplan/token',
      pipePrefix: null,
    });
    const without = servicePaths({
      env: { XDG_STATE_HOME: '/data/state' },
      platform: 'linux',
      uid: 1000,
      home: '/home/me',
      tmpdir: '/tmp',
    });
    assert.equal(without.runtimeDir, '/tmp/ultraplan-1000');
    assert.equal(without.stateDir, '/data/state/ultraplan/service');
    // A relative XDG value is ignored, as the XDG spec says.
    assert.equal(
      servicePaths({ env: { XDG_RUNTIME_DIR: 'run' }, platform: 'linux', uid: 7, tmpdir: '/tmp', home: '/h' }).runtimeDir,
      '/tmp/ultraplan-7',
    );
  });

  it('ULTRAPLAN_SERVICE_DIR holds both folders; Windows uses a named pipe that carries the user', () => {
    assert.deepEqual(servicePaths({ env: { ULTRAPLAN_SERVICE_DIR: '/x' }, platform: 'linux' }), {
      runtimeDir: '/x/run',
      stateDir: '/x/state',
      tokenFile: '/x/run/token',
      pipePrefix: null,
    });
    const windows = servicePaths({
      env: { LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local' },
      platform: 'win32',
      userName: 'me',
      home: 'C:\\Users\\me',
    });
    assert.equal(windows.stateDir, 'C:\\Users\\me\\AppData\\Local\\Ultraplan\\service');
    assert.match(servicePlace(windows, '1.2.0').socket, /^\\\\\.\\pipe\\ultraplan-me-[0-9a-f]+-1\.2\.0$/);
  });

  it('names carry the version; a version that cannot name a file, or a socket path too long for the kernel, is refused', () => {
    const place = servicePlace(servicePaths({ env: { ULTRAPLAN_SERVICE_DIR: '/x' }, platform: 'linux' }), '1.2.0');
    assert.equal(place.socket, '/x/run/service-1.2.0.sock');
    assert.equal(place.dataDir, '/x/state/data-1.2.0');
    assert.equal(place.logFile, '/x/state/service-1.2.0.log');
    assert.equal(versionOfDataDir('data-1.2.0'), '1.2.0');
    assert.equal(versionOfDataDir('data-..'), null);
    for (const bad of ['../1', '1/2', '', '.hidden', 'a b']) assert.throws(() => checkServiceVersion(bad), /cannot name a file/);
    const deep = servicePaths({ env: { ULTRAPLAN_SERVICE_DIR: `/${'d'.repeat(100)}` }, platform: 'linux' });
    assert.throws(() => servicePlace(deep, '1.0.0'), /too long for a Unix socket; set ULTRAPLAN_SERVICE_DIR/);
  });

  it('orders versions as releases are numbered', () => {
    assert.equal(compareVersions('1.10.0', '1.9.2'), 1);
    assert.equal(compareVersions('1.0.0', '1.0.0'), 0);
    assert.equal(compareVersions('1.0', '1.0.0'), 0);
    assert.equal(compareVersions('0.9.0', '1.0.0'), -1);
    assert.equal(compareVersions('1.0.0-rc.1', '1.0.0'), -1);
    assert.equal(compareVersions('1.0.0', '1.0.0-rc.1'), 1);
    assert.equal(compareVersions('1.0.0-rc.2', '1.0.0-rc.1'), 1);
  });
});
