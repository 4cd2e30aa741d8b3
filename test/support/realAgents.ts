// The real ACP agents the tests run (TESTING.md "Real agents, with only the model scripted"): their
// command lines and an environment that points their model at a scripted server on 127.0.0.1 and
// at a throwaway home, so nothing of this machine's logins or settings reaches them.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { ClientConnection } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import * as agentPaths from '../../scripts/agents-config.cjs';
import { acpSdk } from '../../src/agents/acp/sdk';
import { type ChatRequest, chatText, openaiChatApi } from './modelApi/openaiChat';
import type { ModelApiFamily, ModelRequestView, ScenarioRound } from './modelApi/scenario';
import { waitGone } from './processes';

const REPO = path.resolve(__dirname, '..', '..');

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

/**
 * Claude's ACP adapter, pinned in the agents' cache like the others (not a devDependency: it asks
 * for a newer Node than a user's `npm ci` may have, and only the tests run it).
 */
export const CLAUDE_ADAPTER = ensurePinnedAgent('claude');

/** The adapter's own Claude Code program (its platform package), for tests that run it directly. */
export const CLAUDE_CODE_PACKAGE = path.join(agentPaths.agentHome('claude'), 'node_modules', '@anthropic-ai', 'claude-agent-sdk-linux-x64');

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

/** Claude's model planning: it writes `plan` to the plan file its plan mode names (`onPlanFile` hears where), loads ExitPlanMode and calls it. */
export function claudePlanning(plan: string, onPlanFile?: (planFile: string) => void): ScenarioRound[] {
  return [
    (view) => {
      const planFile = claudePlanFile(view);
      onPlanFile?.(planFile);
      return { toolCalls: [{ name: 'Write', input: { file_path: planFile, content: plan } }] };
    },
    () => ({ toolCalls: [{ name: 'ToolSearch', input: { query: 'select:ExitPlanMode', max_results: 1 } }] }),
    () => ({ toolCalls: [{ name: 'ExitPlanMode', input: {} }] }),
  ];
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
    ...claudePlanning(plan, onPlanFile),
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

/** Qwen Code in ACP mode, run by this Node. */
export function qwenArgv(): string[] {
  return [process.execPath, ensurePinnedAgent('qwen'), '--acp'];
}

/** Qwen Code against `modelUrl` (an OpenAI-compatible Chat Completions API), with the key it reads. */
export function qwenEnv(home: string, modelUrl: string): Record<string, string> {
  return {
    ...baseEnv(home),
    OPENAI_BASE_URL: `${modelUrl}/v1`,
    OPENAI_API_KEY: 'sk-scripted',
    OPENAI_MODEL: 'scripted-model',
  };
}

/** The user message Qwen Code's follow-up suggestion ends with (its SUGGESTION_PROMPT). */
const QWEN_SUGGESTION_MODE = '[SUGGESTION MODE:';

function qwenSideCall(request: ChatRequest): 'memory' | 'suggestion' | undefined {
  const first = request.messages[0];
  if (first?.role === 'system' && typeof first.content === 'string' && first.content.includes('managed memory extraction subagent')) {
    return 'memory';
  }
  const last = request.messages.at(-1);
  if (last?.role === 'user' && chatText(last.content).startsWith(QWEN_SUGGESTION_MODE)) return 'suggestion';
  return undefined;
}

/**
 * The Chat Completions API as Qwen Code calls it. After a turn Qwen runs two side calls of its own,
 * fire-and-forget, so whether they come before the test ends depends on the machine's load: a
 * memory-extraction subagent (its system prompt says so), answered with nothing to remember, and a
 * follow-up suggestion for the user's next prompt, answered with none (so no
 * `qwen/notify/session/prompt-suggestion` follows). Both stay outside the scenario.
 */
export const qwenModelApi: ModelApiFamily = openaiChatApi({
  isSideCall: (request) => qwenSideCall(request) !== undefined,
  sideReply: (request) =>
    qwenSideCall(request) === 'suggestion' ? { text: JSON.stringify({ suggestion: '' }) } : { text: 'Nothing durable to remember.' },
});

/** GitHub Copilot CLI in ACP mode (its npm loader starts the platform program). */
export function copilotArgv(): string[] {
  return [ensurePinnedAgent('copilot'), '--acp'];
}

/**
 * Copilot CLI against `modelUrl` through its own BYOK variables (an OpenAI-compatible Chat
 * Completions API): offline, so it needs no GitHub login and reaches nothing else.
 */
export function copilotEnv(home: string, modelUrl: string): Record<string, string> {
  return {
    ...baseEnv(home),
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: `${modelUrl}/v1`,
    COPILOT_PROVIDER_API_KEY: 'sk-scripted',
    COPILOT_MODEL: 'gpt-5.4',
    COPILOT_AUTO_UPDATE: 'false',
  };
}

/** The plan file Copilot's plan mode tells the model to save (its system prompt names it). */
export function copilotPlanFile(view: ModelRequestView): string {
  const match = /Save the plan to: (\S+\/plan\.md)/.exec(view.allText);
  if (!match?.[1]) throw new Error('the request names no plan file');
  return match[1];
}

/** OpenCode in ACP mode (its platform program, which the setup installs without running install scripts). */
export function opencodeArgv(): string[] {
  return [ensurePinnedAgent('opencode'), 'acp'];
}

/**
 * OpenCode against `modelUrl`: one provider of its own config (an OpenAI-compatible Chat
 * Completions API through @ai-sdk/openai-compatible), no model list fetched, no update, no plugins;
 * `permission` as a person's opencode.json would set it.
 */
export function opencodeEnv(home: string, modelUrl: string, permission?: Record<string, string>): Record<string, string> {
  const config = {
    ...(permission ? { permission } : {}),
    $schema: 'https://opencode.ai/config.json',
    model: 'scripted/scripted-model',
    small_model: 'scripted/scripted-model',
    share: 'disabled',
    autoupdate: false,
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted model',
        options: { baseURL: `${modelUrl}/v1`, apiKey: 'sk-scripted' },
        models: { 'scripted-model': { name: 'Scripted model' } },
      },
    },
  };
  return {
    ...baseEnv(home),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
}

/** The system prompt of OpenCode's own title request (its title agent), outside the conversation. */
const OPENCODE_TITLE_AGENT = 'You are a title generator.';

/** The Chat Completions API as OpenCode calls it; its title request is answered outside the scenario. */
export const opencodeModelApi: ModelApiFamily = openaiChatApi({
  isSideCall: (request) => {
    const first = request.messages[0];
    return first?.role === 'system' && chatText(first.content).startsWith(OPENCODE_TITLE_AGENT);
  },
  sideReply: () => ({ text: 'Flip the flag' }),
});
