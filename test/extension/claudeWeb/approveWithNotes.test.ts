// Approve with notes on Claude Code on the web: a followed session (the real FollowedSession) on
// the real claude-web backend, behind the strict Claude-compatibility server in front of the real
// session server. The notes must travel inside the approval's updatedInput.plan (a cloud session
// refuses an approval without the plan), and the review shows it as an edited approval.
import { strict as assert } from 'node:assert';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bindingFor } from '../../../src/core/decision';
import type { ClaudeWebBackend } from '../../../src/client/claudeWeb/backend';
import type { FollowedSession } from '../../../src/extension/sessions/followedSession';
import { startClaudeCompatProxy, type ClaudeCompatProxy } from '../../support/claudeCompatProxy';
import { launchClaudeWebSession, makeClaudeHome, makeGitRepo, type ClaudeHome } from '../../support/claudeCompatFixtures';
import { followSession } from '../../support/followedSession';
import { EXAMPLES_DIR, startServer, type ServerProcess } from '../../support/serverProcess';
import { waitFor } from '../../support/wait';

const ORG = 'org-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
const NOTES = 'Keep the changelog in Keep a Changelog format.';

describe('approve with notes on Claude Code on the web (strict stand-in)', function () {
  this.timeout(60_000);
  let server: ServerProcess;
  let proxy: ClaudeCompatProxy;
  let home: ClaudeHome;
  let repo: string;
  let backend: ClaudeWebBackend | undefined;
  let controller: FollowedSession | undefined;

  before(async () => {
    server = await startServer({ scenario: join(EXAMPLES_DIR, 'approve.json') });
    proxy = await startClaudeCompatProxy({
      upstreamUrl: server.url,
      upstreamToken: server.token,
      validTokens: ['token-valid'],
      organizationUuid: ORG,
      repos: { 'acme/widgets': { app: 'installed' } },
    });
    home = await makeClaudeHome({ accessToken: 'token-valid' }, ORG);
    repo = await makeGitRepo('https://github.com/acme/widgets.git');
  });
  after(async () => {
    controller?.dispose();
    await controller?.settled();
    await backend?.dispose();
    await proxy?.close();
    await server?.stop();
    await home?.remove();
    if (repo) await rm(repo, { recursive: true, force: true });
  });

  it('one edited approval whose updatedInput.plan is the plan plus the notes; the remote approves it as edited', async () => {
    const launched = await launchClaudeWebSession(home, proxy.url, repo, 'ultraplan: Add a changelog', 'Add a changelog');
    backend = launched.backend;
    const session = { id: launched.sessionId };
    controller = followSession(backend, session.id, 30_000);
    const c = controller;
    await waitFor(() => c.canDecide, { message: 'a plan to decide', timeoutMs: 30_000 });
    const plan = c.pendingPlan!.plan;
    const before = proxy.requests.length;
    assert.deepEqual(await c.decisions.approveWithNotes(bindingFor(session.id, c.pendingPlan!.toolUseId, plan), NOTES), { sent: true });

    const posts = proxy.requests.slice(before).filter((r) => r.method === 'POST' && r.path.endsWith('/events'));
    assert.equal(posts.length, 1, 'one send');
    const events = (posts[0]!.body as { events: Array<{ payload: Record<string, unknown> }> }).events;
    assert.equal(events.length, 1, 'the approval alone: no message follows it on the web');
    const response = (events[0]!.payload as { response: { response: { behavior: string; updatedInput: { plan: string } } } }).response
      .response;
    assert.equal(response.behavior, 'allow');
    assert.ok(response.updatedInput.plan.startsWith(plan.trimEnd()), 'the plan as shown, first');
    assert.match(response.updatedInput.plan, /\n## Reviewer notes\n\nKeep the changelog in Keep a Changelog format\.\n$/);

    // The remote records an edited approval; the review shows it as such, with the notes.
    await waitFor(() => c.phase === 'executing' || c.phase === 'completed', { message: 'the remote executing', timeoutMs: 30_000 });
    const revision = c.snapshot.panel.revisions.at(-1);
    assert.equal(revision?.status, 'approved_edited');
    assert.match(revision?.plan ?? '', /## Reviewer notes\n\nKeep the changelog/);
    assert.equal(revision?.notes, NOTES);
  });
});
