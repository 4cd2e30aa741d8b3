// The real ACP agents the tests run (TESTING.md "Real agents, with only the model scripted"): their
// command lines and an environment that points their model at a scripted server on 127.0.0.1 and
// at a throwaway home, so nothing of this machine's logins or settings reaches them.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { ClientConnection } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import * as agentPaths from '../../scripts/agents-config.cjs';
import { acpSdk } from '../../src/sessions/acp/sdk';
import type { ModelRequestView, ScenarioRound } from './modelApi/scenario';
import { waitGone } from './processes';

const REPO = path.resolve(__dirname, '..', '..');

/** Claude's ACP adapter, a devDependency (npm ci installs it). */
export const CLAUDE_ADAPTER = path.join(REPO, 'node_modules', '.bin', 'claude-agent-acp');

/** Installs a pinned agent into the per-machine cache when it is not there yet (once; see README). */
export function ensurePinnedAgent(id: string): string {
  if (!existsSync(agentPaths.agentMarker(id))) {
    const result = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'setup-agents.mjs'), id], {
      stdio: 'inherit',
      timeout: 10 * 60_000,
    });
    if (result.status !== 0)
      throw new Error(`node scripts/setup-agents.mjs ${id} failed (${result.status ?? result.signal}); the test needs the real agent`);
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
    // No IS_SANDBOX: as root (CI) the adapter plans as it does for a person running as root.
  };
}

/** Gemini CLI against `modelUrl` (the Gemini API). */
export function geminiEnv(home: string, modelUrl: string): Record<string, string> {
  return { ...baseEnv(home), GOOGLE_GEMINI_BASE_URL: modelUrl, GEMINI_API_KEY: 'scripted-model-key' };
}

/**
 * Codex's config.toml for a throwaway CODEX_HOME: a model provider of our own at the scripted
 * Responses API (`baseUrl`), a known model slug (so Codex uses its own metadata), no retries.
 */
export function codexConfig(baseUrl: string): string {
  return [
    'model = "gpt-6.1-terra"',
    'model_provider = "scripted"',
    '[model_providers.scripted]',
    'name = "Scripted model"',
    `base_url = "${baseUrl}"`,
    'wire_api = "responses"',
    'env_key = "OPENAI_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
}

/** The plan file Claude Code tells the model to write (its plan-mode reminder names it). */
export function claudePlanFile(view: ModelRequestView): string {
  const match = /create your plan at (\S+?\.md)/.exec(view.allText) ?? /plan file (?:already )?exists at:? (\S+?\.md)/.exec(view.allText);
  if (!match?.[1]) throw new Error('the request names no plan file');
  return match[1];
}

/**
 * Claude's model for one plan: it writes `plan` to the plan file its plan mode names (`onPlanFile`
 * hears where), loads ExitPlanMode and asks to leave plan mode; once approved, it writes `content`
 * to `file()` and says it is done.
 */
export function claudePlanThenWrite(
  plan: string,
  file: () => string,
  content: string,
  onPlanFile?: (planFile: string) => void,
): ScenarioRound[] {
  return [
    (view) => {
      const planFile = claudePlanFile(view);
      onPlanFile?.(planFile);
      return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: plan } }] };
    },
    () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
    () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
    () => ({ toolCalls: [{ name: 'Write', input: { file_path: file(), content } }] }),
    () => ({ text: 'Done.' }),
  ];
}

/** The plans folder Gemini's write_file declaration names while in plan mode. */
export function geminiPlansDir(view: ModelRequestView): string {
  const match = /plans directory: (\S+?)\/?\.\s/.exec(view.allText);
  if (!match?.[1]) throw new Error('the request names no plans directory');
  return match[1];
}

type AcpClientApp = ReturnType<ReturnType<typeof acpSdk>['client']>;

/**
 * An agent spawned on its own (no Ultraplan client), in its own process group, connected with the
 * ACP SDK: `setup` registers handlers, `use` talks to it; the group is killed afterwards.
 */
export async function withRawAgent<T>(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string> },
  setup: (app: AcpClientApp) => void,
  use: (connection: ClientConnection) => Promise<T>,
): Promise<T> {
  const [command, ...args] = argv;
  if (!command) throw new Error('empty agent command');
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  try {
    const app = acpSdk().client({ name: 'ultraplan-test' });
    setup(app);
    const connection = app.connect(
      acpSdk().ndJsonStream(
        Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
      ),
    );
    try {
      return await use(connection);
    } finally {
      connection.close();
    }
  } finally {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      // A leaked agent must fail the test even when the test itself passed.
      // eslint-disable-next-line no-unsafe-finally
      if (!(await waitGone(child.pid))) throw new Error(`agent ${child.pid} left running`);
    }
  }
}

/** Codex's adapter, installed pinned in the per-machine cache. */
export function codexArgv(): string[] {
  return [ensurePinnedAgent('codex')];
}

/** Codex's adapter against `modelUrl`, in a CODEX_HOME under `home`, with the key it authenticates with (`api-key`). */
export function codexEnv(home: string, modelUrl: string): Record<string, string> {
  const codexHome = path.join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(modelUrl));
  return { ...baseEnv(home), CODEX_HOME: codexHome, OPENAI_API_KEY: 'sk-scripted', NO_BROWSER: '1' };
}
