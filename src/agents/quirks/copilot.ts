// GitHub Copilot CLI over ACP (`copilot --acp`), as it behaves (version 1.0.102, run with only the
// model scripted, through its own BYOK provider variables):
// - its modes are URLs: `https://agentclientprotocol.com/protocol/session-modes#agent` (current
//   after session/new), `…#plan`, `…#autopilot` (allow-all, no questions), also the `mode` config
//   option; a config option `allow_all` (on/off);
// - plan mode has no request to leave it over ACP: the model is told to save the plan to
//   `<COPILOT_HOME or ~/.copilot>/session-state/<session id>/plan.md` (no permission asked) and
//   to sum it up; a change elsewhere is refused by Copilot itself ("Plan mode does not permit
//   changes outside the session folder"). So the turn's end offers that file for review;
// - `loadSession: true`, and it holds: after a kill -9 of the host, session/load from a new
//   process brings the conversation back (test/agents/acpSessionLoad.test.ts, acpResume.test.ts).
import * as path from 'node:path';
import type { AfterApproval } from '../acp/planReview';
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';

const MODE = (name: string) => `https://agentclientprotocol.com/protocol/session-modes#${name}`;

/** Copilot's mode for each ultraplan.afterApproval value (it has no mode that accepts edits alone). */
export const COPILOT_CARRY_OUT_MODES: Record<AfterApproval, string> = {
  default: MODE('agent'),
  acceptEdits: MODE('agent'),
  bypassPermissions: MODE('autopilot'),
};

/** Where Copilot saves a session's plan. */
export function copilotPlanFile(agent: { home: string; env: Readonly<Record<string, string | undefined>>; sessionId: string }): string {
  const state = agent.env.COPILOT_HOME || path.join(agent.home, '.copilot');
  return path.join(state, 'session-state', agent.sessionId, 'plan.md');
}

export const COPILOT_QUIRKS: AgentQuirks = {
  ...PLAIN_ACP,
  name: 'GitHub Copilot CLI',
  loginHint: 'Run `copilot` and /login with a GitHub account that has Copilot (or set COPILOT_GITHUB_TOKEN), then start again.',
  planAtTurnEnd: { planFile: copilotPlanFile },
  carryOutMode: (afterApproval, available) =>
    available.includes(COPILOT_CARRY_OUT_MODES[afterApproval]) ? COPILOT_CARRY_OUT_MODES[afterApproval] : undefined,
  loadsSessions: true,
};
