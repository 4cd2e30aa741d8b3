import assert from 'node:assert/strict';
import { CLAUDE_WEB_FAILURE_REASONS, ClaudeWebError } from '../../../src/client/claudeWeb';
import { claudeWebActions, isLoginFailure, launchWarning } from '../../../src/extension/claudeWeb/claudeWebFailure';
import { parseSettings, SETTING_DEFAULTS, type SettingKey } from '../../../src/extension/settings/settingsSchema';

const labels = (err: ClaudeWebError, canRetry = true) => claudeWebActions(err, canRetry).map((a) => a.label);

describe('claude-web failures in the editor', () => {
  it('a login problem offers a terminal for `claude`, then Retry', () => {
    for (const reason of [
      'not_logged_in',
      'credentials_malformed',
      'missing_scope',
      'token_expired',
      'token_refused',
      'organization_unknown',
    ] as const) {
      const err = new ClaudeWebError(reason, 'msg');
      assert.deepEqual(labels(err), ['Open Terminal', 'Retry'], reason);
      assert.equal(isLoginFailure(err), true, reason);
    }
  });

  it('no environment opens claude.ai/code (its link), Retry, Choose Backend', () => {
    const err = new ClaudeWebError('no_environment', 'msg', { url: 'https://claude.ai/code' });
    const actions = claudeWebActions(err);
    assert.deepEqual(
      actions.map((a) => a.label),
      ['Open claude.ai/code', 'Retry', 'Choose Backend…'],
    );
    assert.equal(actions[0]?.url, 'https://claude.ai/code');
    assert.equal(isLoginFailure(err), false);
  });

  it('a configured environment that does not exist sends the person to Choose Backend', () => {
    const err = new ClaudeWebError('no_environment', 'msg', { remedy: 'choose_environment' });
    assert.deepEqual(labels(err), ['Choose Backend…', 'Retry']);
  });

  it('the GitHub app: the install link from the error, then Retry', () => {
    const err = new ClaudeWebError('github_app_not_installed', 'msg', { url: 'https://github.com/apps/claude' });
    const actions = claudeWebActions(err);
    assert.deepEqual(
      actions.map((a) => [a.label, a.kind, a.url]),
      [
        ['Install the GitHub App', 'open_url', 'https://github.com/apps/claude'],
        ['Retry', 'retry', undefined],
      ],
    );
  });

  it('a refused decision offers the browser and never Retry', () => {
    const err = new ClaudeWebError('decision_not_delivered', 'msg', { url: 'https://claude.ai/code/s1' });
    assert.deepEqual(
      claudeWebActions(err).map((a) => [a.label, a.url]),
      [['Review in Browser', 'https://claude.ai/code/s1']],
    );
  });

  it('organization policy: another backend, no Retry (an admin must change it)', () => {
    assert.deepEqual(labels(new ClaudeWebError('org_policy', 'msg')), ['Choose Backend…']);
  });

  it('repository problems open a folder; the service unreachable retries and shows the log', () => {
    assert.deepEqual(labels(new ClaudeWebError('not_git_repository', 'msg')), ['Open Folder…', 'Retry']);
    assert.deepEqual(labels(new ClaudeWebError('no_github_remote', 'msg')), ['Open Folder…', 'Retry']);
    assert.deepEqual(labels(new ClaudeWebError('service_unreachable', 'msg')), ['Retry', 'Show Log']);
  });

  it('every reason has at least one button; without a retry step there is no Retry', () => {
    for (const reason of CLAUDE_WEB_FAILURE_REASONS) {
      const err = new ClaudeWebError(reason, 'msg', { url: 'https://claude.ai/code/x' });
      assert.ok(claudeWebActions(err).length > 0, reason);
      assert.ok(!labels(err, false).includes('Retry'), reason);
    }
  });

  it('warnings before launch become one question; none, no question', () => {
    assert.equal(launchWarning([]), undefined);
    assert.equal(launchWarning(['  ']), undefined);
    const w = launchWarning([
      '2 changed files not committed and pushed: the remote session will not see them.',
      '1 local commit on main not pushed to origin/main.',
    ]);
    assert.ok(w);
    assert.match(w.message, /starts from what is on GitHub/);
    assert.match(w.detail, /2 changed files[\s\S]*1 local commit[\s\S]*Launch anyway, or cancel/);
  });
});

describe('claude-web settings', () => {
  const read = (values: Partial<Record<SettingKey, unknown>>) => parseSettings((k) => values[k]);

  it('claude-web is a backend; the environment and the API address default sensibly', () => {
    const r = read({ backend: 'claude-web' });
    assert.deepEqual(r.problems, []);
    assert.equal(r.settings.backend, 'claude-web');
    assert.equal(SETTING_DEFAULTS['claudeWeb.environmentId'], '');
    assert.equal(r.settings['claudeWeb.baseUrl'], 'https://api.anthropic.com');
  });

  it('takes an environment id and a local API address (tests, proxies)', () => {
    const r = read({ 'claudeWeb.environmentId': ' env_01abc ', 'claudeWeb.baseUrl': 'http://127.0.0.1:4567' });
    assert.deepEqual(r.problems, []);
    assert.equal(r.settings['claudeWeb.environmentId'], 'env_01abc');
    assert.equal(r.settings['claudeWeb.baseUrl'], 'http://127.0.0.1:4567');
  });

  it('refuses a bad environment id or address against its own key, keeping the default', () => {
    const r = read({ 'claudeWeb.environmentId': 'my env', 'claudeWeb.baseUrl': 'ftp://x' });
    assert.deepEqual(
      r.problems.map((p) => p.key),
      ['ultraplan.claudeWeb.environmentId', 'ultraplan.claudeWeb.baseUrl'],
    );
    assert.equal(r.settings['claudeWeb.environmentId'], '');
    assert.equal(r.settings['claudeWeb.baseUrl'], 'https://api.anthropic.com');
    assert.match(read({ 'claudeWeb.baseUrl': '' }).problems[0]?.message ?? '', /must not be empty/);
  });
});
