// Starting an ACP session: initialize (which tells the agent's quirks), authenticate where the
// agent needs it, session/new (or, after a restart of the host, session/load of the session the
// agent had), then the switch to plan mode and any preset planning needs besides, or, for a turn
// that carries out an approved plan, to the mode ultraplan.afterApproval asks for. Each step has
// its bound; the planning guard learns the modes as they are answered.
import type { ClientConnection, InitializeResponse, NewSessionResponse } from '@agentclientprotocol/sdk' with {
  'resolution-mode': 'import',
};
import type { AgentQuirks } from '../quirks/agentQuirks';
import type { AfterApproval } from './planReview';
import { chooseQuirks } from '../quirks/chooseQuirks';
import { choosePlanMode } from './planMode';
import type { PlanningGuard } from './planningGuard';
import { TimeoutError, withTimeout } from './requestErrors';
import { AcpSessionChannel } from './sessionChannel';

export interface HandshakeHost {
  readonly label: string;
  readonly workspace: string;
  /** The agent's environment (where an API key for `authenticate` is looked for). */
  readonly env: Record<string, string | undefined>;
  /** The bound on each step. */
  readonly boundMs: number;
  readonly afterApproval: AfterApproval;
  readonly guard: CarryOutGuard & Pick<PlanningGuard, 'enteredPlanMode' | 'mode' | 'planModeChosen' | 'sessionCreated'>;
  log(line: string): void;
  /** initialize answered: the agent's quirks apply from here on; `loadable`: it is resumed with session/load. */
  introduced(agentInfo: InitializeResponse['agentInfo'], quirks: AgentQuirks, loadable: boolean): void;
  /** session/new answered: the session's requests go to `session`. */
  sessionCreated(session: AcpSessionChannel): void;
  /** While session/load replays the conversation: its updates are history, not news. */
  replaying(on: boolean): void;
}

/** What leaving plan mode for an approved plan reads and sets of the planning guard. */
type CarryOutGuard = Pick<PlanningGuard, 'availableModeIds' | 'carryingOut' | 'markApproved' | 'planTarget' | 'sessionMode'>;

/** How the session starts: planning, or carrying out an approved plan (its planning agent had stopped). */
export type SessionStart = { kind: 'new'; carryOut: boolean } | { kind: 'load'; sessionId: string; carryOut: boolean };

export type HandshakeOutcome =
  | { ok: true }
  /** Said as it is; `complete`: it says all there is, so the agent's stderr does not follow it. */
  | { ok: false; message: string; complete?: boolean }
  /** A request failed: `context` and the error (or the process's exit, if it died), with a login hint for the person. */
  | { ok: false; context: string; error: unknown; loginHint?: string };

export async function handshake(connection: ClientConnection, host: HandshakeHost, start: SessionStart): Promise<HandshakeOutcome> {
  const { label, boundMs: bound, guard } = host;
  const seconds = Math.round(bound / 1000);
  let step = 'initialize';
  let quirks: AgentQuirks | undefined;
  try {
    const init = await withTimeout(
      connection.agent.request('initialize', {
        protocolVersion: 1,
        clientCapabilities: {
          fs: { readTextFile: true, writeTextFile: true },
          terminal: false,
          elicitation: { form: {} },
        },
        clientInfo: { name: 'ultraplan', title: 'Ultraplan', version: '0.1.0' },
      }),
      bound,
      `${label} did not answer initialize within ${seconds} s.`,
    );
    quirks = chooseQuirks(init.agentInfo);
    host.introduced(init.agentInfo, quirks, quirks.loadsSessions && init.agentCapabilities?.loadSession === true);
    host.log(`initialized ${init.agentInfo ? `${init.agentInfo.name} ${init.agentInfo.version}` : 'an agent without agentInfo'}`);
    if (start.kind === 'load') {
      if (!quirks.loadsSessions) return { ok: false, message: `${label} is not resumed with session/load (see docs/agents.md)` };
      if (init.agentCapabilities?.loadSession !== true) return { ok: false, message: `${label} does not offer session/load` };
    }
    if (quirks.authentication) {
      step = 'authenticate';
      const auth = quirks.authentication(init, host.env);
      if ('methodId' in auth) {
        await withTimeout(
          connection.agent.request('authenticate', { methodId: auth.methodId }),
          bound,
          `${label} did not answer authenticate within ${seconds} s.`,
        );
        host.log(`authenticated with "${auth.methodId}"`);
      } else {
        host.log(`did not authenticate: ${auth.skip}`);
      }
    }

    // The plan was approved before this process started: the mode a loaded session reports on its
    // own (Copilot CLI's comes back in its agent mode) is no plan mode left without approval, and
    // switching it back would race the switch that carries the plan out.
    if (start.carryOut) guard.markApproved();
    step = start.kind === 'new' ? 'session/new' : 'session/load';
    let sessionId: string;
    let opened: Pick<NewSessionResponse, 'modes' | 'configOptions'>;
    const meta = quirks.sessionMeta?.(host.afterApproval);
    if (start.kind === 'new') {
      const created = await withTimeout(
        connection.agent.request('session/new', { cwd: host.workspace, mcpServers: [], ...(meta ? { _meta: meta } : {}) }),
        bound,
        `${label} did not answer session/new within ${seconds} s.`,
      );
      sessionId = created.sessionId;
      opened = created;
    } else {
      host.replaying(true);
      try {
        opened = await withTimeout(
          connection.agent.request('session/load', {
            sessionId: start.sessionId,
            cwd: host.workspace,
            mcpServers: [],
            ...(meta ? { _meta: meta } : {}),
          }),
          bound,
          `${label} did not answer session/load within ${seconds} s.`,
        );
      } finally {
        host.replaying(false);
      }
      sessionId = start.sessionId;
    }
    const session = new AcpSessionChannel(connection, sessionId);
    host.sessionCreated(session);
    guard.sessionCreated(opened.modes);

    if (start.carryOut) {
      step = 'the switch out of plan mode to carry out the approved plan';
      const mode = await withTimeout(
        enterCarryOut(session, quirks, guard, host.afterApproval),
        bound,
        `${label} did not switch to the mode that carries out the plan within ${seconds} s.`,
      );
      host.log(`session ${sessionId} carries out an approved plan in mode "${mode ?? guard.mode ?? 'its own'}"`);
      return { ok: true };
    }

    // A loaded session comes back in whatever mode the agent saved (Codex and Gemini: not plan
    // mode, nor Codex's read-only preset): planning is set up again, as for a new session.
    const choice = choosePlanMode(label, opened);
    if (!choice.ok) return { ok: false, message: choice.message };
    guard.planModeChosen(choice.target);
    step = 'the switch to plan mode';
    await withTimeout(session.enterPlanMode(choice.target), bound, `${label} did not switch to plan mode within ${seconds} s.`);
    guard.enteredPlanMode();
    host.log(`session ${sessionId} in plan mode "${guard.mode}"`);

    const preset = quirks.planningPreset;
    if (preset) {
      if (!guard.availableModeIds.includes(preset.modeId)) return { ok: false, message: preset.missing(label, guard.availableModeIds) };
      step = `the switch to the "${preset.modeId}" preset`;
      await withTimeout(
        session.setMode(preset.modeId),
        bound,
        `${label} did not switch to its "${preset.modeId}" preset within ${seconds} s.`,
      );
      guard.sessionMode = preset.modeId;
      host.log(`set the "${preset.modeId}" preset while planning`);
    }
    return { ok: true };
  } catch (error) {
    if (error instanceof TimeoutError) return { ok: false, message: error.message };
    const refusal = step === 'session/new' ? quirks?.startupRefusal?.(error, host.afterApproval) : undefined;
    if (refusal) return { ok: false, message: refusal, complete: true };
    const context = step === 'session/new' ? `${label} refused session/new` : `${label} failed during ${step}`;
    const loginHint = step === 'session/new' || step === 'authenticate' ? quirks?.loginHint : undefined;
    return { ok: false, context, error, loginHint };
  }
}

/**
 * Out of planning, to carry out an approved plan: the mode ultraplan.afterApproval asks for (and,
 * where plan mode is a config option, that option back to its default); the guard no longer holds
 * the session read-only. Returns the mode set, if any.
 */
export async function enterCarryOut(
  session: AcpSessionChannel,
  quirks: AgentQuirks,
  guard: CarryOutGuard,
  afterApproval: AfterApproval,
): Promise<string | undefined> {
  const mode = quirks.carryOutMode(afterApproval, guard.availableModeIds);
  // An agent whose plan is its turn's end leaves plan mode through its own option (OpenCode's `mode`
  // back to `build`), as Approve does on a live turn: a loaded session comes back in plan mode.
  const leave = quirks.presetHandover?.leavePlanMode(guard.planTarget) ?? quirks.planAtTurnEnd?.leavePlanMode;
  if (mode !== undefined) {
    await session.setMode(mode);
    guard.sessionMode = mode;
  }
  if (leave) await session.setConfigOption(leave.configId, leave.value);
  // Where plan mode is a config option, that option speaks for the mode; the session modes are then presets.
  guard.carryingOut(leave?.value ?? (guard.planTarget?.via === 'config_option' ? undefined : mode));
  return mode;
}
