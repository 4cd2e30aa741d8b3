// The bubblewrap the setup unpacks is where the sandbox looks for it, and it is not on PATH: a
// `bwrap` on PATH changes how Codex's adapter, run as root, sandboxes its own commands.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { privateBwrap as setupsBwrap } from '../../../scripts/agents-config.cjs';
import { findOnPath } from '../../../src/agents/catalogue/knownAgents';
import { privateBwrap, sandboxSupport } from '../../../src/agents/sandbox/support';

describe('the sandbox finds the bubblewrap the setup unpacked', () => {
  it('looks where scripts/ensure-system-deps.mjs unpacks it, for any cache folder', () => {
    assert.equal(privateBwrap(), existsSync(setupsBwrap()) ? setupsBwrap() : undefined);
    const elsewhere = { ...process.env, ULTRAPLAN_CACHE: path.join(path.sep, 'nowhere', 'ultraplan') };
    assert.equal(privateBwrap(elsewhere), undefined);
  });

  it('runs the unpacked one when none is on PATH, and the setup put none there', () => {
    assert.equal(findOnPath('bwrap'), undefined, 'a bwrap on PATH: the setup must unpack it, not install it');
    const support = sandboxSupport();
    assert.ok(support.supported, support.supported ? '' : support.reason);
    assert.equal(support.tools.bwrap, setupsBwrap());
  });

  it('runs the bubblewrap it is handed (the extension, for its local service), and says so when that is missing', () => {
    const handed = sandboxSupport(process.env, 'linux', setupsBwrap());
    assert.ok(handed.supported, handed.supported ? '' : handed.reason);
    assert.equal(handed.tools.bwrap, setupsBwrap());
    const missing = path.join(path.sep, 'nowhere', 'bwrap');
    const refused = sandboxSupport(process.env, 'linux', missing);
    assert.equal(refused.supported, false);
    assert.match(
      refused.supported ? '' : refused.reason,
      /^bubblewrap \(bwrap\) is not at \/nowhere\/bwrap\. Install your distribution's bubblewrap and socat/,
    );
    assert.equal(sandboxSupport(process.env, 'linux', 'bwrap').supported, false, 'a relative path is not looked up');
  });
});
