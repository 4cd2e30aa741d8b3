// `npm run manifest`: writes the settings' values and their descriptions that come from the agents'
// catalogue and the backend descriptors into package.json (src/agents/catalogue/settingsText.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MANIFEST_ENUMS } from '../src/agents/catalogue/settingsText';

const file = path.join(__dirname, '..', 'package.json');
const manifest = JSON.parse(readFileSync(file, 'utf8'));
const properties = manifest.contributes.configuration.properties;
for (const [key, text] of Object.entries(MANIFEST_ENUMS)) {
  const { enum: values, enumDescriptions } = text();
  properties[key] = { ...properties[key], enum: values, enumDescriptions };
}
writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`package.json: ${Object.keys(MANIFEST_ENUMS).join(', ')}`);
