// What a known agent needs in its environment to report its progress while it carries out an
// approved plan (docs/execution.md "Where progress comes from"), read from the pinned agents:
// - Claude Code (behind Claude's adapter) offers no todo tool to its newer models (TodoWrite and
//   TaskCreate are enabled for claude-3 / claude-*-4 models only, unless
//   CLAUDE_CODE_ENABLE_TODO_TOOLS is set); with CLAUDE_CODE_ENABLE_TASKS=false the tool is
//   TodoWrite, which the adapter sends as one ACP `plan` update with the whole list, rather than
//   the Task tools, whose list the adapter sends twice per call;
// - Codex offers `update_plan` (sent as ACP `plan` updates) only when the config enables it:
//   `tools.update_plan.enabled`, which Codex's adapter takes from the CODEX_CONFIG JSON it passes to
//   each thread it starts;
// - Gemini CLI sends no `plan` update at all (its write_todos reaches the client as "Set N todo(s)"
//   without the entries), so nothing is set for it: its progress is its edits.
// A variable the person set is theirs: it is never replaced, and their CODEX_CONFIG is kept with
// only the missing switch added.
import * as z from 'zod';
import { errorMessage } from '../../core/errors';
import type { KnownAgentId } from './knownAgents';

type Env = Record<string, string | undefined>;

/** Claude Code's switches: its todo tool on, as TodoWrite. */
export const CLAUDE_PROGRESS_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_ENABLE_TODO_TOOLS: '1',
  CLAUDE_CODE_ENABLE_TASKS: 'false',
};

/** The JSON object of Codex's adapter's CODEX_CONFIG (anything else inside it is the person's). */
const CodexConfigSchema = z.record(z.string(), z.unknown());

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `config` (the person's CODEX_CONFIG, if any) with `tools.update_plan.enabled` set unless they set it. */
export function codexConfigWithPlanTool(config: string | undefined): { value: string } | { problem: string } {
  let parsed: Record<string, unknown> = {};
  if (config !== undefined && config.trim() !== '') {
    try {
      const read = CodexConfigSchema.safeParse(JSON.parse(config));
      if (!read.success) return { problem: 'CODEX_CONFIG is not a JSON object' };
      parsed = read.data;
    } catch (err) {
      return { problem: `CODEX_CONFIG is not JSON (${errorMessage(err)})` };
    }
  }
  const tools = isObject(parsed.tools) ? parsed.tools : {};
  if (parsed.tools !== undefined && !isObject(parsed.tools)) return { problem: 'CODEX_CONFIG.tools is not an object' };
  const planTool = isObject(tools.update_plan) ? tools.update_plan : {};
  if (tools.update_plan !== undefined && !isObject(tools.update_plan))
    return { problem: 'CODEX_CONFIG.tools.update_plan is not an object' };
  if (planTool.enabled !== undefined) return { value: config ?? '' };
  return { value: JSON.stringify({ ...parsed, tools: { ...tools, update_plan: { ...planTool, enabled: true } } }) };
}

/**
 * The variables to add to `env` (the agent's environment) so that `agent` reports its progress;
 * with `problem` when the person's own setting keeps it from doing so (said in the session log).
 */
export function progressSignalEnv(agent: KnownAgentId | undefined, env: Env): { set: Record<string, string>; problem?: string } {
  if (agent === 'claude') {
    // Either switch set by the person decides which tool (if any) Claude Code offers.
    if (Object.keys(CLAUDE_PROGRESS_ENV).some((name) => env[name] !== undefined)) return { set: {} };
    return { set: { ...CLAUDE_PROGRESS_ENV } };
  }
  if (agent === 'codex') {
    const config = codexConfigWithPlanTool(env.CODEX_CONFIG);
    if ('problem' in config) return { set: {}, problem: `${config.problem}: Codex's plan updates (update_plan) stay off` };
    return config.value === env.CODEX_CONFIG ? { set: {} } : { set: { CODEX_CONFIG: config.value } };
  }
  return { set: {} };
}
