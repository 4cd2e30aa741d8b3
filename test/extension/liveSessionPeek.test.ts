// What the bootstrap asks at startup (src/extension/liveSessionPeek.ts), against the real local
// service (dist/server.mjs) as a second window finds it: a live planning session of this folder
// says yes; no service, another folder's session, a review's run, or an archived session say no;
// and looking never starts a service nor makes its folder or token.
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { userMessageEvent } from '../../src/core/protocol';
import { withAgentLaunch } from '../../src/core/agentLaunch';
import { SESSION_PURPOSE_KEY } from '../../src/core/sessionPurpose';
import { connectOrStartService } from '../../src/client/localService/serviceLauncher';
import type { SessionsClient } from '../../src/client/sessionsClient';
import { folderHasLiveSession } from '../../src/extension/liveSessionPeek';
import { SERVICE_DIR_ENV, servicePids } from '../support/serviceProcess';
import { waitFor } from '../support/wait';
import { cleanUpServices, clientOf, launcherOptions, scripted, serviceDir } from '../client/localService/serviceKit';

const FOLDER = '/work/project-of-the-window';
const VERSION = '1.0.0';

async function planIn(client: SessionsClient, folder: string, purpose?: 'review'): Promise<string> {
  const request = withAgentLaunch(
    { title: 'ultraplan: plan', events: [{ type: 'event', data: userMessageEvent('plan the change') }] },
    scripted('slow.json'),
    folder,
  );
  if (purpose) request.session_context = { ...request.session_context, [SESSION_PURPOSE_KEY]: purpose };
  return (await client.createSession(request)).id;
}

describe('the bootstrap asks a running local service for a live session of its folder', function () {
  this.timeout(60_000);
  afterEach(cleanUpServices);

  it('no service: no, and nothing is started or made', async () => {
    const dir = serviceDir();
    const environment = { env: { [SERVICE_DIR_ENV]: dir } };
    const started = Date.now();
    assert.equal(await folderHasLiveSession(VERSION, FOLDER, { environment }), false);
    assert.ok(Date.now() - started < 500, `looking took ${Date.now() - started} ms`);
    assert.equal(existsSync(dir), false, 'no folder, no token was made');
    assert.deepEqual(servicePids(dir), [], 'no service was started');
  });

  it("yes for a live planning session of this folder (another window's), no for another folder, a review's run or once archived", async () => {
    const dir = serviceDir();
    const environment = { env: { [SERVICE_DIR_ENV]: dir } };
    const connection = await connectOrStartService(launcherOptions(dir, VERSION));
    const client = clientOf(connection);
    assert.equal(await folderHasLiveSession(VERSION, FOLDER, { environment }), false, 'a service with no session');

    await planIn(client, '/work/another-folder');
    await planIn(client, FOLDER, 'review');
    await waitFor(async () => (await client.listSessions()).every((s) => s.session_status !== 'idle'), {
      message: 'both sessions at work',
      timeoutMs: 10_000,
    });
    assert.equal(await folderHasLiveSession(VERSION, FOLDER, { environment }), false, "another folder's session, a review's run");

    const plan = await planIn(client, FOLDER);
    await waitFor(async () => ['running', 'requires_action'].includes((await client.getSession(plan)).session_status), {
      message: 'the plan session live',
      timeoutMs: 10_000,
    });
    const started = Date.now();
    assert.equal(await folderHasLiveSession(VERSION, FOLDER, { environment }), true);
    const tookMs = Date.now() - started;
    assert.ok(tookMs < 1_000, `looking took ${tookMs} ms`);
    // Another version's window asks its own service, which does not run.
    assert.equal(await folderHasLiveSession('2.0.0', FOLDER, { environment }), false);

    await client.archive(plan);
    assert.equal(await folderHasLiveSession(VERSION, FOLDER, { environment }), false, 'archived');
  });
});
