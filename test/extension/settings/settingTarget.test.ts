// Choose Backend writes where the value that applies lives: writing the user's value while the
// workspace sets one would change nothing the person sees.
import * as assert from 'node:assert/strict';
import { settingTarget } from '../../../src/extension/settings/settingTarget';

describe('where a picked setting is written', () => {
  it('the workspace folder, then the workspace, where they set it; else the user settings', () => {
    assert.equal(
      settingTarget({ globalValue: 'server', workspaceValue: 'embedded', workspaceFolderValue: 'claude-web' }),
      'workspaceFolder',
    );
    assert.equal(settingTarget({ globalValue: 'server', workspaceValue: 'embedded' }), 'workspace');
    assert.equal(settingTarget({ globalValue: 'server' }), 'global');
    assert.equal(settingTarget({}), 'global');
    assert.equal(settingTarget(undefined), 'global');
  });
});
