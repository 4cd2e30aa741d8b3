import { strict as assert } from 'node:assert';
import { startServer, type ServerProcess } from '../support/serverProcess';

describe('ultraplan-server smoke (serverProcess helper)', () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('starts from the built CLI, prints one listening line, answers with the token and stops on SIGTERM', async () => {
    server = await startServer();
    assert.match(server.stdout(), /^ultraplan-server listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    const list = await fetch(`${server.url}/v1/sessions`, { headers: server.headers() });
    assert.equal(list.status, 200);
    assert.deepEqual(await list.json(), { data: [], has_more: false, first_id: null, last_id: null });
    const code = await server.stop();
    assert.equal(code, 0);
    assert.match(server.stderr(), /stopped/);
  });
});
