// The real ACP agents the tests run (TESTING.md "Real agents, with only the model scripted"): their
// command lines and an environment that points their model at a scripted server on 127.0.0.1 and
// at a throwaway home, so nothing of this machine's logins or settings reaches them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as agentPaths from '../../scripts/agents-config.cjs';

const REPO = path.resolve(__dirname, '..', '..');

/** Claude's ACP adapter, a devDependency (npm ci installs it). */
export const CLAUDE_ADAPTER = path.join(REPO, 'node_modules', '.bin', 'claude-agent-acp');

/** Installs a pinned agent into the per-machine cache when it is not there yet (once; see README). */
export function ensurePinnedAgent(id: string): string {
  if (!existsSync(agentPaths.agentMarker(id))) {
    const result = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'setup-agents.mjs'), id], { stdio: 'inherit', timeout: 10 * 60_000 });
    if (result.status !== 0) throw new Error(`node scripts/setup-agents.mjs ${id} failed (${result.status ?? result.signal}); the test needs the real agent`);
  }
  return agentPaths.agentBin(id);
}

/** Gemini CLI in ACP mode, run by this Node. */
export function geminiArgv(): string[] {
  return [process.execPath, ensurePinnedAgent('gemini'), '--acp'];
}

function baseEnv(home: string): Record<string, string> {
  const env: Record<string, string> = { HOME: home };
  for (const key of ['PATH', 'LANG', 'TMPDIR']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/** Claude's adapter against `modelUrl` (the Anthropic Messages API). */
export function claudeEnv(home: string, modelUrl: string): Record<string, string> {
  return {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'sk-ant-scripted-model',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // As root the adapter refuses session/new unless it is told it runs in a sandbox.
    IS_SANDBOX: '1',
  };
}

/** Gemini CLI against `modelUrl` (the Gemini API). */
export function geminiEnv(home: string, modelUrl: string): Record<string, string> {
  return { ...baseEnv(home), GOOGLE_GEMINI_BASE_URL: modelUrl, GEMINI_API_KEY: 'scripted-model-key' };
}
