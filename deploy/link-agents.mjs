#!/usr/bin/env node
// Puts each pinned agent's program (installed by scripts/setup-agents.mjs under ULTRAPLAN_CACHE)
// into one folder by its plain name, so that folder on PATH lets `--agent acp:claude` (gemini,
// codex) find it as a person's global install would. Used by deploy/Dockerfile; the deploy test
// runs it too, so the image's layout is the one tested.
//
//   ULTRAPLAN_CACHE=/opt/ultraplan node deploy/link-agents.mjs /opt/ultraplan/bin
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const agents = require('../scripts/agents-config.cjs');

/** Links every pinned agent into `binDir`; answers the links made. */
export function linkAgents(binDir) {
  mkdirSync(binDir, { recursive: true });
  return Object.entries(agents.PACKAGES).map(([id, spec]) => {
    const target = agents.agentBin(id);
    if (!existsSync(target)) throw new Error(`${id}: ${target} is missing; run scripts/setup-agents.mjs first`);
    const link = path.join(binDir, spec.bin);
    rmSync(link, { force: true });
    symlinkSync(target, link);
    return link;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const binDir = process.argv[2];
  if (!binDir) {
    console.error('usage: node deploy/link-agents.mjs BIN_DIR');
    process.exit(2);
  }
  for (const link of linkAgents(path.resolve(binDir))) console.log(`[link-agents] ${link}`);
}
