// Which sessions of the local service a window follows on its own because another window on the
// same folder started them (src/sessions/service/otherWindows.ts), and the look that never starts
// the service (findRunningService): a window that only looks must not keep a service alive.
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import type { SessionResource } from '../../../src/core/protocol';
import { WORKSPACE_KEY, withAgentLaunch, workspaceOf } from '../../../src/sessions/service/agentLaunch';
import { LocalService } from '../../../src/sessions/service/localService';
import { sessionsToPickUp } from '../../../src/sessions/service/otherWindows';
import { connectOrStartService } from '../../../src/sessions/service/serviceLauncher';
import { servicePids } from '../../support/serviceProcess';
import { cleanUpServices, launcherOptions, scripted, serviceDir } from './serviceKit';

const FOLDER = '/home/me/project';
const SINCE = Date.parse('2026-12-01T10:00:00Z');

function session(id: string, status: string, createdAt: string, folder: string | null = FOLDER): SessionResource {
  return {
    type: 'session',
    id,
    title: id,
    session_status: status,
    created_at: createdAt,
    updated_at: createdAt,
    session_context: folder === null ? {} : { [WORKSPACE_KEY]: folder },
  } as SessionResource;
}

const before = '2026-12-01T09:00:00Z';
const after = '2026-12-01T10:00:05Z';

describe('sessions another window on the same folder started', () => {
  it('picks every live session of this folder, and any other one created since the window started looking', () => {
    const listed = [
      session('plan-waits', 'requires_action', before),
      session('agent-works', 'running', before),
      session('question-since', 'idle', after),
      session('finished-before', 'idle', before),
      session('archived', 'archived', after),
      session('other-folder', 'requires_action', after, '/home/me/other'),
      session('no-folder', 'requires_action', after, null),
      session('followed', 'requires_action', after),
    ];
    const picked = sessionsToPickUp(listed, { folder: FOLDER, since: SINCE, known: (id) => id === 'followed' });
    assert.deepEqual(
      picked.map((s) => s.id),
      ['plan-waits', 'agent-works', 'question-since'],
    );
  });

  it('the creation request names the window folder, and only a non-empty text is taken back', () => {
    const request = withAgentLaunch({ title: 't', events: [] }, scripted('approve.json'), FOLDER);
    assert.equal(workspaceOf(request.session_context), FOLDER);
    assert.equal(workspaceOf(withAgentLaunch({ title: 't', events: [] }, scripted('approve.json')).session_context), undefined);
    assert.equal(workspaceOf({ [WORKSPACE_KEY]: 42 }), undefined);
    assert.equal(workspaceOf({ [WORKSPACE_KEY]: '' }), undefined);
  });
});

describe('looking for the local service without starting it', function () {
  this.timeout(60_000);
  afterEach(cleanUpServices);

  it('finds nothing and makes nothing where no service runs; finds the one that runs', async () => {
    const dir = serviceDir();
    const service = new LocalService(launcherOptions(dir));
    assert.equal(await service.ifRunning(), null);
    assert.equal(existsSync(dir), false, 'no folder, no token was made');
    assert.deepEqual(servicePids(dir), [], 'no service was started');

    const started = await connectOrStartService(launcherOptions(dir));
    const found = await service.ifRunning();
    assert.equal(found?.status.pid, started.status.pid);
    assert.equal(found?.spawned, false);
  });
});
