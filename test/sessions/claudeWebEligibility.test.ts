// Every reason Claude Code on the web can refuse a launch, in Claude Code's order, each with its
// message, against the strict Claude-compatibility proxy (real HTTP on 127.0.0.1) and real git.
import { strict as assert } from 'node:assert';
import { rm } from 'node:fs/promises';
import { checkClaudeWebEligibility, type EligibilityOptions } from '../../src/sessions/claudeWeb/eligibility';
import { ClaudeWebError, type ClaudeWebFailureReason } from '../../src/sessions/claudeWeb/errors';
import { listEnvironments } from '../../src/sessions/claudeWeb/backend';
import { startClaudeCompatProxy, type ClaudeCompatProxy } from '../support/claudeCompatProxy';
import { assertUntouched, git, makeClaudeHome, makeGitRepo, type ClaudeHome } from '../support/claudeCompatFixtures';

const ORG = 'org-11111111-2222-3333-4444-555555555555';

describe('claude-web eligibility (strict Claude-compatibility proxy)', () => {
  let proxy: ClaudeCompatProxy;
  let home: ClaudeHome;
  let repo: string;
  const cleanup: string[] = [];

  before(async () => {
    proxy = await startClaudeCompatProxy({
      // Eligibility never reaches the Sessions API; nothing listens here.
      upstreamUrl: 'http://127.0.0.1:9',
      upstreamToken: null,
      validTokens: ['token-valid'],
      organizationUuid: ORG,
      repos: { 'acme/widgets': { appInstalled: true }, 'acme/noapp': { appInstalled: false } },
    });
  });
  after(async () => {
    await proxy.close();
  });

  beforeEach(async () => {
    proxy.requests.length = 0;
    proxy.settings.policyDisablesRemoteSessions = false;
    proxy.settings.profileOrganizationUuid = undefined;
    proxy.settings.environments = [
      { kind: 'bridge', environment_id: 'env_bridge', name: 'laptop' },
      { kind: 'byoc', environment_id: 'env_byoc', name: 'our runners' },
      { kind: 'anthropic_cloud', environment_id: 'env_cloud', name: 'Default' },
    ];
    home = await makeClaudeHome({ accessToken: 'token-valid' }, ORG);
    repo = await makeGitRepo('git@github.com:acme/widgets.git');
    cleanup.push(repo);
  });
  afterEach(async () => {
    await home.remove();
    for (const dir of cleanup.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  const options = (extra: Partial<EligibilityOptions> = {}): EligibilityOptions => ({
    env: home.env,
    homeDir: home.homeDir,
    platform: 'linux',
    baseUrl: proxy.url,
    workspaceFolder: repo,
    ...extra,
  });

  async function expectReason(reason: ClaudeWebFailureReason, pattern: RegExp, extra: Partial<EligibilityOptions> = {}): Promise<ClaudeWebError> {
    try {
      await checkClaudeWebEligibility(options(extra));
    } catch (err) {
      assert.ok(err instanceof ClaudeWebError, `expected ClaudeWebError, got ${String(err)}`);
      assert.equal(err.reason, reason, err.message);
      assert.match(err.message, pattern);
      assert.doesNotMatch(err.message, /token-valid|token-stale|refresh-secret/, 'a token reached the message');
      return err;
    }
    assert.fail(`expected ${reason}`);
  }

  it('eligible: organization from .claude.json, the anthropic_cloud environment, the repository; the login untouched', async () => {
    const before = await home.snapshot();
    const result = await checkClaudeWebEligibility(options());
    assert.equal(result.organizationUuid, ORG);
    assert.equal(result.organizationFrom, 'config');
    assert.equal(result.environment.environment_id, 'env_cloud');
    assert.equal(result.environments.length, 3);
    assert.equal(`${result.repository.owner}/${result.repository.name}`, 'acme/widgets');
    assert.equal(result.repository.revision, 'main');
    assert.equal(result.login.source, 'file');
    assert.deepEqual(result.warnings, []);
    assert.ok(!('accessToken' in result.login), 'the eligibility result must not hold the token');
    // The account calls carried the token, the CCR headers and the organization.
    const paths = proxy.requests.map((r) => r.path);
    assert.deepEqual(paths, ['/v1/environment_providers', `/api/oauth/organizations/${ORG}/code/repos/acme/widgets`]);
    for (const request of proxy.requests) {
      assert.equal(request.token, 'token-valid');
      assert.equal(request.headers['x-organization-uuid'], ORG);
    }
    await assertUntouched(home, before);
  });

  it('the organization comes from the profile call when .claude.json has none', async () => {
    await home.writeGlobalConfig(undefined);
    const result = await checkClaudeWebEligibility(options());
    assert.equal(result.organizationFrom, 'profile');
    assert.equal(result.organizationUuid, ORG);
    assert.equal(proxy.requests[0]?.path, '/api/oauth/profile');
  });

  it('no organization anywhere: organization_unknown, run claude', async () => {
    await home.writeGlobalConfig(undefined);
    proxy.settings.profileOrganizationUuid = null;
    await expectReason('organization_unknown', /which Claude organization.*Run `claude` once/);
  });

  it('1. not logged in (no credentials): says to run claude and log in with a Claude.ai account', async () => {
    await home.writeCredentials(null);
    const err = await expectReason('not_logged_in', /not logged in with a Claude\.ai account.*Run `claude` once in a terminal \(log in with your Claude\.ai account/);
    assert.equal(err.remedy, 'run_claude');
    assert.equal(proxy.requests.length, 0, 'no request without a login');
  });

  it('1. a login without the sessions scope: missing_scope', async () => {
    await home.writeCredentials({ scopes: ['user:inference'] });
    await expectReason('missing_scope', /user:sessions:claude_code/);
  });

  it('1. an expired login: token_expired, never refreshed, nothing sent', async () => {
    await home.writeCredentials({ expiresAt: Date.now() - 10 * 60_000 });
    const before = await home.snapshot();
    await expectReason('token_expired', /expired 10 min ago.*Run `claude` once/);
    assert.equal(proxy.requests.length, 0);
    await assertUntouched(home, before);
  });

  it('1. a token the service refuses (401): token_refused with the fix', async () => {
    await home.writeCredentials({ accessToken: 'token-stale' });
    const err = await expectReason('token_refused', /refused Claude Code's login \(HTTP 401.*Run `claude` once/);
    assert.equal(err.remedy, 'run_claude');
    assert.equal(proxy.requests[0]?.status, 401);
  });

  it('a login about to expire is used, with a warning', async () => {
    await home.writeCredentials({ expiresAt: Date.now() + 2 * 60_000 });
    const result = await checkClaudeWebEligibility(options());
    assert.match(result.warnings.join('\n'), /login expires in about 2 min/);
  });

  it('2. the organization policy (a 403 naming the policy) comes before every later check', async () => {
    proxy.settings.policyDisablesRemoteSessions = true;
    const notRepo = await makeGitRepo(undefined);
    cleanup.push(notRepo);
    const err = await expectReason('org_policy', /organization's policy disables Claude Code remote sessions.*admin/, { workspaceFolder: notRepo });
    assert.equal(err.remedy, 'contact_admin');
  });

  it('3. no cloud environment (only a bridge): no_environment, set one up at claude.ai/code', async () => {
    proxy.settings.environments = [{ kind: 'bridge', environment_id: 'env_bridge', name: 'laptop' }];
    const err = await expectReason('no_environment', /no Claude Code cloud environment.*https:\/\/claude\.ai\/code/);
    assert.equal(err.url, 'https://claude.ai/code');
  });

  it('3. no environment at all', async () => {
    proxy.settings.environments = [];
    await expectReason('no_environment', /no Claude Code cloud environment\. Set one up/);
  });

  it('3. the setting names the environment to use; an unknown one is refused with the picker as fix', async () => {
    const chosen = await checkClaudeWebEligibility(options({ environmentId: 'env_byoc' }));
    assert.equal(chosen.environment.environment_id, 'env_byoc');
    const err = await expectReason('no_environment', /"env_gone" in the setting ultraplan\.claudeWeb\.environmentId.*Choose Backend/, { environmentId: 'env_gone' });
    assert.equal(err.remedy, 'choose_environment');
  });

  it('3. without anthropic_cloud, the first environment that is not a bridge', async () => {
    proxy.settings.environments = [
      { kind: 'bridge', environment_id: 'env_bridge', name: 'laptop' },
      { kind: 'byoc', environment_id: 'env_byoc', name: 'our runners' },
    ];
    assert.equal((await checkClaudeWebEligibility(options())).environment.environment_id, 'env_byoc');
  });

  it('4. not a git repository', async () => {
    await expectReason('not_git_repository', /is not a git repository/, { workspaceFolder: home.homeDir });
  });

  it('5. no GitHub remote', async () => {
    const noRemote = await makeGitRepo(undefined);
    cleanup.push(noRemote);
    await expectReason('no_github_remote', /has no remote/, { workspaceFolder: noRemote });
    const gitlab = await makeGitRepo('https://gitlab.com/acme/widgets.git');
    cleanup.push(gitlab);
    await expectReason('no_github_remote', /points to gitlab\.com, not github\.com/, { workspaceFolder: gitlab });
  });

  it('6. the Claude GitHub app not installed (or the repository unknown to it)', async () => {
    const noApp = await makeGitRepo('https://github.com/acme/noapp.git');
    cleanup.push(noApp);
    const err = await expectReason('github_app_not_installed', /Claude GitHub app is not installed on acme\/noapp.*https:\/\/github\.com\/apps\/claude/, { workspaceFolder: noApp });
    assert.equal(err.remedy, 'install_github_app');
    const unknown = await makeGitRepo('https://github.com/acme/unknown.git');
    cleanup.push(unknown);
    await expectReason('github_app_not_installed', /acme\/unknown/, { workspaceFolder: unknown });
  });

  it('local changes not pushed: eligible, with warnings', async () => {
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'local');
    const result = await checkClaudeWebEligibility(options());
    assert.match(result.warnings.join('\n'), /1 local commit on main not pushed/);
  });

  it('the service unreachable: service_unreachable with Retry', async () => {
    const err = await expectReason('service_unreachable', /Could not reach http:\/\/127\.0\.0\.1:9/, { baseUrl: 'http://127.0.0.1:9' });
    assert.equal(err.remedy, 'retry');
  });

  it('listEnvironments for the picker: all environments and the one the rules choose', async () => {
    const listed = await listEnvironments({ env: home.env, homeDir: home.homeDir, platform: 'linux', baseUrl: proxy.url });
    assert.deepEqual(listed.environments.map((e) => e.environment_id), ['env_bridge', 'env_byoc', 'env_cloud']);
    assert.equal(listed.chosen?.environment_id, 'env_cloud');
    assert.equal(listed.organizationUuid, ORG);
    proxy.settings.environments = [{ kind: 'bridge', environment_id: 'env_bridge', name: 'laptop' }];
    assert.equal((await listEnvironments({ env: home.env, homeDir: home.homeDir, platform: 'linux', baseUrl: proxy.url })).chosen, undefined);
  });
});
