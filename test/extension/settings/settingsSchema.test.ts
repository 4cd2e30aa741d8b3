import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  LOCAL_SANDBOX_CHOICES,
  SETTING_DEFAULTS,
  backendProblems,
  parseSettings,
  taskArgv,
  type SettingKey,
} from '../../../src/extension/settings/settingsSchema';

function read(values: Partial<Record<SettingKey, unknown>>) {
  return parseSettings((k) => values[k]);
}

describe('settings parsing', () => {
  it('unset keys take their defaults', () => {
    const r = read({});
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.settings, SETTING_DEFAULTS);
    assert.equal(r.settings.plansDirectory, '.ultraplan/plans');
    assert.equal(r.settings['teleport.archiveRemote'], true);
  });

  it('accepts valid values', () => {
    const r = read({ backend: 'server', 'server.url': 'http://127.0.0.1:8787', pollIntervalMs: 500, 'teleport.target': 'task' });
    assert.deepEqual(r.problems, []);
    assert.equal(r.settings.backend, 'server');
    assert.equal(r.settings.pollIntervalMs, 500);
  });

  it('a bad value is reported against its key with what was given, and falls back to the default', () => {
    const r = read({ backend: 'cloud', pollIntervalMs: 10 });
    assert.equal(r.problems.length, 2);
    assert.equal(r.problems[0]?.key, 'ultraplan.backend');
    assert.match(r.problems[0]?.message ?? '', /must be one of: embedded, server.*"cloud"/);
    assert.match(r.problems[1]?.message ?? '', /ultraplan\.pollIntervalMs must be at least 250/);
    assert.equal(r.settings.backend, 'embedded');
    assert.equal(r.settings.pollIntervalMs, 3000);
  });

  it('refuses non-http server URLs and escaping plan folders', () => {
    assert.equal(read({ 'server.url': 'ftp://x' }).problems[0]?.key, 'ultraplan.server.url');
    assert.equal(read({ 'server.url': 'javascript:alert(1)' }).problems.length, 1);
    assert.match(read({ plansDirectory: '../outside' }).problems[0]?.message ?? '', /\.\./);
    assert.equal(read({ plansDirectory: '' }).problems.length, 1);
  });

  it("refuses a Jules address that is not http(s) or is empty, and keeps Jules's own", () => {
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', '']) {
      const r = read({ 'jules.baseUrl': bad });
      assert.equal(r.problems[0]?.key, 'ultraplan.jules.baseUrl', bad);
      assert.equal(r.settings['jules.baseUrl'], 'https://jules.googleapis.com/v1alpha');
    }
    assert.deepEqual(read({ 'jules.baseUrl': 'http://127.0.0.1:9/v1alpha' }).problems, []);
  });

  it("outside access is ask, allow or deny, and only the user's settings can set it (a workspace's files are not trusted)", () => {
    assert.equal(read({}).settings['agent.outsideAccess'], 'ask');
    assert.equal(read({ 'agent.outsideAccess': 'deny' }).settings['agent.outsideAccess'], 'deny');
    const bad = read({ 'agent.outsideAccess': 'always' });
    assert.match(bad.problems[0]?.message ?? '', /ultraplan\.agent\.outsideAccess must be one of: ask, allow, deny/);
    assert.equal(bad.settings['agent.outsideAccess'], 'ask');
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { scope?: string; default?: unknown }> } };
    };
    const property = manifest.contributes.configuration.properties['ultraplan.agent.outsideAccess'];
    assert.equal(property?.scope, 'application');
    assert.equal(property?.default, 'ask');
  });

  it("the local service's sandbox is auto or off, and only the user's settings can turn it off (a workspace's files are not trusted)", () => {
    assert.equal(read({}).settings['localService.sandbox'], 'auto');
    assert.equal(read({ 'localService.sandbox': 'off' }).settings['localService.sandbox'], 'off');
    const bad = read({ 'localService.sandbox': 'required' });
    assert.match(bad.problems[0]?.message ?? '', /ultraplan\.localService\.sandbox must be one of: auto, off/);
    assert.equal(bad.settings['localService.sandbox'], 'auto');
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { scope?: string; default?: unknown; enum?: unknown }> } };
    };
    const property = manifest.contributes.configuration.properties['ultraplan.localService.sandbox'];
    assert.equal(property?.scope, 'application');
    assert.equal(property?.default, SETTING_DEFAULTS['localService.sandbox']);
    assert.deepEqual(property?.enum, [...LOCAL_SANDBOX_CHOICES]);
  });

  it('refuses a task command that is a shell line instead of an argv array', () => {
    const r = read({ 'teleport.taskCommand': 'my-agent --plan file' });
    assert.equal(r.problems[0]?.key, 'ultraplan.teleport.taskCommand');
    assert.match(r.problems[0]?.message ?? '', /list of arguments/);
  });

  it('the server backend needs a URL', () => {
    const r = read({ backend: 'server' });
    assert.equal(backendProblems(r.settings)[0]?.key, 'ultraplan.server.url');
    assert.deepEqual(backendProblems(read({ backend: 'embedded' }).settings), []);
  });

  it('puts the plan file into the task argv as its own argument, never into a shell line', () => {
    const hostile = '/tmp/plans/$(touch pwned); rm -rf ~.md';
    assert.deepEqual(taskArgv(['agent', '--plan', '${planFile}', '--go'], hostile), {
      command: 'agent',
      args: ['--plan', hostile, '--go'],
    });
    assert.deepEqual(taskArgv(['agent'], '/p.md'), { command: 'agent', args: ['/p.md'] });
    assert.throws(() => taskArgv([], '/p.md'), /empty/);
  });
});
