// Settings a cloned repository's .vscode/settings.json must not steer in Restricted Mode: VS Code
// ignores the workspace value of every key listed in restrictedConfigurations while the workspace
// is untrusted (the person's own user setting still applies).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  contributes: { configuration: { properties: Record<string, { scope?: string }> } };
};

describe('untrusted workspaces: restricted settings', () => {
  const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;

  it('restricts the settings that run a program or choose where files are written', () => {
    // taskCommand runs a program; embedded.scenario picks a file to load; plansDirectory picks
    // the folder a model-written file lands in (absolute paths allowed, e.g. ~/.bashrc.d, which
    // some shells source file by file).
    for (const key of ['ultraplan.teleport.taskCommand', 'ultraplan.embedded.scenario', 'ultraplan.plansDirectory']) {
      assert.ok(restricted.includes(key), `${key} is in restrictedConfigurations`);
    }
  });

  it('restricts the custom agent command, which is spawned as a program', () => {
    assert.ok(restricted.includes('ultraplan.agent.command'));
  });

  it("keeps the address Claude Code's login is sent to out of every workspace's reach", () => {
    // Application scope: VS Code reads it from the person's user settings only, so a cloned
    // repository cannot point the Claude login at a host of its choosing, trusted or not.
    assert.equal(manifest.contributes.configuration.properties['ultraplan.claudeWeb.baseUrl']?.scope, 'application');
    assert.ok(restricted.includes('ultraplan.claudeWeb.baseUrl'));
  });

  it("keeps the address the Jules API key is sent to out of every workspace's reach", () => {
    assert.equal(manifest.contributes.configuration.properties['ultraplan.jules.baseUrl']?.scope, 'application');
    assert.ok(restricted.includes('ultraplan.jules.baseUrl'));
  });

  it('every restricted key is a real setting', () => {
    const properties = manifest.contributes.configuration.properties;
    for (const key of restricted) assert.ok(key in properties, `${key} is contributed`);
  });
});
