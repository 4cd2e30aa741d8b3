// OpenCode over ACP (`opencode acp`), as it behaves (version 1.18.33, read from its program and
// run with only the model scripted, through an OpenAI-compatible provider in its config):
// - no session modes; plan mode is its `plan` agent, the `mode` config option (`build`, current
//   after session/new, or `plan`: "Plan mode. Disallows all edit tools."). Its permission rules
//   deny every edit in plan mode except `.opencode/plans/*.md` (and its data folder's plans);
// - its `plan_exit` tool (and `question`) exist only for its own terminal client with
//   OPENCODE_EXPERIMENTAL_PLAN_MODE: `opencode acp` sets OPENCODE_CLIENT=acp, so over ACP the
//   model ends its turn with the plan, or with a question; the turn's end is the plan's review;
// - permission options `once` (allow_once), `always` (allow_always), `reject` (reject_once);
// - `loadSession: true`, and it holds: after a kill -9 of the host, session/load from a new
//   process brings the conversation back (test/agents/acpSessionLoad.test.ts, acpResume.test.ts).
import { PLAIN_ACP, type AgentQuirks } from './agentQuirks';

export const OPENCODE_QUIRKS: AgentQuirks = {
  ...PLAIN_ACP,
  name: 'OpenCode',
  loginHint: 'Run `opencode auth login` (or name a provider in opencode.json), then start again.',
  planAtTurnEnd: { leavePlanMode: { configId: 'mode', value: 'build' } },
  loadsSessions: true,
};
