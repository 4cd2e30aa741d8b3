// Every reason Claude Code on the web can refuse a launch, in Claude Code's order, each with its
// message, against the strict Claude-compatibility server (real HTTP on 127.0.0.1) and real git:
// policy first, paged environments (the first anthropic_cloud, no fallback), the GitHub app with its
// resync, ssh host aliases resolved with `ssh -G`, CLAUDE_CODE_ORGANIZATION_UUID.
import { strict as assert } from 'node:assert';
import { rm } from 'node:fs/promises';
import { checkClaudeWebEligibility, type EligibilityOptions } from '../../src/client/claudeWeb/eligibility';
import { ClaudeWebError, type ClaudeWebFailureReason } from '../../src/client/claudeWeb/errors';
import { listEnvironments } from '../../src/client/claudeWeb/backend';
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
      repos: {
        'acme/widgets': { app: 'installed' },
        'acme/noapp': { app: 'not_installed' },
        'acme/fresh': { app: 'unknown', resyncTo: 'installed' },
        'acme/fresh-noapp': { app: 'unknown', resyncTo: 'not_installed' },
      },
    });
  });
  after(async () => {
    await proxy.close();
  });

  beforeEach(async () => {
    proxy.requests.length = 0;
    proxy.settings.remoteSessionsAllowed = true;
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

  async function expectReason(
    reason: ClaudeWebFailureReason,
    pattern: RegExp,
    extra: Partial<EligibilityOptions> = {},
  ): Promise<ClaudeWebError> {
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
    // Policy first; the environments paged (two a page here) with limit=100 and after_id.
    const calls = proxy.requests.map((r) => `${r.path}${r.query.after_id ? `?after_id=${r.query.after_id}` : ''}`);
    assert.deepEqual(calls, [
      '/api/claude_code/policy_limits',
      '/v1/environment_providers',
      '/v1/environment_providers?after_id=env_byoc',
      `/api/oauth/organizations/${ORG}/code/repos/acme/widgets`,
    ]);
    for (const request of proxy.requests) {
      assert.equal(request.token, 'token-valid');
      assert.equal(request.status, 200, `${request.path}: ${request.status}`);
      assert.equal(request.headers['anthropic-beta'], undefined);
      assert.equal(request.headers['x-organization-uuid'], request.path.includes('policy_limits') ? undefined : ORG);
    }
    await assertUntouched(home, before);
  });

  it('the organization comes from the profile call when .claude.json has none', async () => {
    await home.writeGlobalConfig(undefined);
    const result = await checkClaudeWebEligibility(options());
    assert.equal(result.organizationFrom, 'profile');
    assert.equal(result.organizationUuid, ORG);
    assert.equal(proxy.requests[1]?.path, '/api/oauth/profile');
  });

  it('CLAUDE_CODE_ORGANIZATION_UUID names the organization before .claude.json and the profile', async () => {
    await home.writeGlobalConfig(undefined);
    const result = await checkClaudeWebEligibility(options({ env: { ...home.env, CLAUDE_CODE_ORGANIZATION_UUID: ORG } }));
    assert.equal(result.organizationFrom, 'env');
    assert.equal(
      proxy.requests.some((r) => r.path === '/api/oauth/profile'),
      false,
    );
  });

  it('no organization anywhere: organization_unknown, run claude', async () => {
    await home.writeGlobalConfig(undefined);
    proxy.settings.profileOrganizationUuid = null;
    await expectReason('organization_unknown', /which Claude organization.*Run `claude` once/);
  });

  it('1. not logged in (no credentials): says to run claude and log in with a Claude.ai account', async () => {
    await home.writeCredentials(null);
    const err = await expectReason(
      'not_logged_in',
      /not logged in with a Claude\.ai account.*Run `claude` once in a terminal \(log in with your Claude\.ai account/,
    );
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
    assert.equal(proxy.requests[0]?.path, '/api/claude_code/policy_limits');
    assert.equal(proxy.requests[0]?.status, 401);
  });

  it('a login about to expire is used, with a warning', async () => {
    await home.writeCredentials({ expiresAt: Date.now() + 2 * 60_000 });
    const result = await checkClaudeWebEligibility(options());
    assert.match(result.warnings.join('\n'), /login expires in about 2 min/);
  });

  it('policy off: policy_limits says no, before every other call and check', async () => {
    proxy.settings.remoteSessionsAllowed = false;
    const notRepo = await makeGitRepo(undefined);
    cleanup.push(notRepo);
    const err = await expectReason(
      'org_policy',
      /Cloud sessions are disabled by your organization's policy\. Contact your organization admin/,
      { workspaceFolder: notRepo },
    );
    assert.equal(err.remedy, 'contact_admin');
    assert.deepEqual(
      proxy.requests.map((r) => r.path),
      ['/api/claude_code/policy_limits'],
    );
  });

  it('no environment: no anthropic_cloud (a bridge and a byoc are no fallback) says how to create one', async () => {
    proxy.settings.environments = [
      { kind: 'bridge', environment_id: 'env_bridge', name: 'laptop' },
      { kind: 'byoc', environment_id: 'env_byoc', name: 'our runners' },
    ];
    const err = await expectReason(
      'no_environment',
      /no Anthropic cloud environment.*only laptop \(bridge\), our runners \(byoc\).*Create one at https:\/\/claude\.ai\/code/,
    );
    assert.equal(err.url, 'https://claude.ai/code');
  });

  it('no environment at all', async () => {
    proxy.settings.environments = [];
    await expectReason('no_environment', /no Anthropic cloud environment for Claude Code\. Create one/);
  });

  it('3. the setting names the environment to use; an unknown one is refused with the picker as fix', async () => {
    const chosen = await checkClaudeWebEligibility(options({ environmentId: 'env_byoc' }));
    assert.equal(chosen.environment.environment_id, 'env_byoc');
    const err = await expectReason('no_environment', /"env_gone" in the setting ultraplan\.claudeWeb\.environmentId.*Choose Backend/, {
      environmentId: 'env_gone',
    });
    assert.equal(err.remedy, 'choose_environment');
  });

  it('environments on many pages: the first anthropic_cloud is found on a later page', async () => {
    proxy.settings.environments = [
      ...Array.from({ length: 5 }, (_, i) => ({ kind: 'bridge', environment_id: `env_b${i}`, name: `laptop ${i}` })),
      { kind: 'anthropic_cloud', environment_id: 'env_late', name: 'Late' },
      { kind: 'anthropic_cloud', environment_id: 'env_later', name: 'Later' },
    ];
    assert.equal((await checkClaudeWebEligibility(options())).environment.environment_id, 'env_late');
    assert.equal(proxy.requests.filter((r) => r.path === '/v1/environment_providers').length, 4);
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
    const err = await expectReason(
      'github_app_not_installed',
      /Claude GitHub app is not installed on acme\/noapp.*https:\/\/github\.com\/apps\/claude/,
      { workspaceFolder: noApp },
    );
    assert.equal(err.remedy, 'install_github_app');
    const unknown = await makeGitRepo('https://github.com/acme/unknown.git');
    cleanup.push(unknown);
    await expectReason('github_app_not_installed', /acme\/unknown/, { workspaceFolder: unknown });
  });

  it('app not installed then resynced: an unknown status asks for the resync, which says installed', async () => {
    const fresh = await makeGitRepo('https://github.com/acme/fresh.git');
    cleanup.push(fresh);
    const result = await checkClaudeWebEligibility(options({ workspaceFolder: fresh }));
    assert.equal(result.repository.name, 'fresh');
    const resync = proxy.requests.find((r) => r.path.endsWith('/code/repos/resync'));
    assert.deepEqual(resync?.body, { owner: 'acme', repo: 'fresh' });
    assert.equal(resync?.method, 'POST');
    assert.equal(resync?.headers['x-organization-uuid'], ORG);
    const freshNoApp = await makeGitRepo('https://github.com/acme/fresh-noapp.git');
    cleanup.push(freshNoApp);
    await expectReason('github_app_not_installed', /acme\/fresh-noapp/, { workspaceFolder: freshNoApp });
  });

  it('an ssh host alias resolved with ssh -G to github.com counts as GitHub', async () => {
    const aliased = await makeGitRepo('git@github.com-work:acme/widgets.git');
    cleanup.push(aliased);
    const asked: string[] = [];
    const ssh = async (target: string) => {
      asked.push(target);
      return target === 'git@github.com-work' ? 'user git\nhostname github.com\nport 22\n' : undefined;
    };
    const result = await checkClaudeWebEligibility(options({ workspaceFolder: aliased, ssh }));
    assert.equal(`${result.repository.host}/${result.repository.owner}/${result.repository.name}`, 'github.com/acme/widgets');
    assert.deepEqual(asked, ['git@github.com-work']);
    assert.match(result.warnings.join('\n'), /points it at github\.com/);
    const elsewhere = await makeGitRepo('git@gitlab-work:acme/widgets.git');
    cleanup.push(elsewhere);
    await expectReason('no_github_remote', /gitlab-work, not github\.com/, {
      workspaceFolder: elsewhere,
      ssh: async () => 'hostname gitlab.com\n',
    });
  });

  it('local changes not pushed: eligible, with warnings', async () => {
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'local');
    const result = await checkClaudeWebEligibility(options());
    assert.match(result.warnings.join('\n'), /1 local commit on main not pushed/);
  });

  it('the service unreachable: service_unreachable with Retry', async () => {
    const err = await expectReason('service_unreachable', /policy could not be read.*Could not reach http:\/\/127\.0\.0\.1:9/, {
      baseUrl: 'http://127.0.0.1:9',
    });
    assert.equal(err.remedy, 'retry');
  });

  it('listEnvironments for the picker: all environments and the one the rules choose', async () => {
    const listed = await listEnvironments({ env: home.env, homeDir: home.homeDir, platform: 'linux', baseUrl: proxy.url });
    assert.deepEqual(
      listed.environments.map((e) => e.environment_id),
      ['env_bridge', 'env_byoc', 'env_cloud'],
    );
    assert.equal(listed.chosen?.environment_id, 'env_cloud');
    assert.equal(listed.organizationUuid, ORG);
    proxy.settings.environments = [{ kind: 'bridge', environment_id: 'env_bridge', name: 'laptop' }];
    assert.equal(
      (await listEnvironments({ env: home.env, homeDir: home.homeDir, platform: 'linux', baseUrl: proxy.url })).chosen,
      undefined,
    );
  });
});
