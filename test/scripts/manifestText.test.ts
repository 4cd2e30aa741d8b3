// The settings whose values and descriptions come from the agents' catalogue and the backend
// descriptors say in package.json exactly what those say (`npm run manifest` writes them).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_ENUMS, agentChoiceText } from '../../src/agents/catalogue/settingsText';
import { KNOWN_AGENTS } from '../../src/agents/catalogue/knownAgents';
import { AGENT_CHOICES } from '../../src/extension/agentSetup/agentChoice';

const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
const properties: Record<string, { enum?: string[]; enumDescriptions?: string[] }> = manifest.contributes.configuration.properties;

describe('package.json settings made from the catalogue and the backend descriptors', () => {
  for (const [key, text] of Object.entries(MANIFEST_ENUMS)) {
    it(`${key}: the values and their descriptions (run npm run manifest after changing either)`, () => {
      const expected = text();
      assert.deepEqual(properties[key]?.enum, [...expected.enum]);
      assert.deepEqual(properties[key]?.enumDescriptions, [...expected.enumDescriptions]);
    });
  }

  it('names every known agent by its command and pinned package, and the setting the extension reads takes the same values', () => {
    const text = agentChoiceText();
    for (const agent of KNOWN_AGENTS) {
      const described = text.enumDescriptions[text.enum.indexOf(agent.id)] ?? '';
      assert.ok(described.includes(`\`${agent.installed.argv.join(' ')}\``), described);
      assert.ok(described.includes(`${agent.package}@${agent.version}`), described);
    }
    assert.deepEqual([...AGENT_CHOICES], [...text.enum]);
  });
});
