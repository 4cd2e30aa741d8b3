// Starting an ACP session: initialize (which tells the agent's quirks), authenticate where the
// agent needs it, session/new, the switch to plan mode and any preset planning needs besides.
// Each step has its bound; the planning guard learns the modes as they are answered.
import type { ClientConnection, InitializeResponse } from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };
import type { AgentQuirks } from './agents/agentQuirks';
import { chooseQuirks } from './agents/chooseQuirks';
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
  readonly guard: PlanningGuard;
  log(line: string): void;
  /** initialize answered: the agent's quirks apply from here on. */
  introduced(agentInfo: InitializeResponse['agentInfo'], quirks: AgentQuirks): void;
  /** session/new answered: the session's requests go to `session`. */
  sessionCreated(session: AcpSessionChannel): void;
}

export type HandshakeOutcome =
  | { ok: true }
  /** Said as it is. */
  | { ok: false; message: string }
  /** A request failed: `context` and the error (or the process's exit, if it died), with a login hint for the person. */
  | { ok: false; context: string; error: unknown; loginHint?: string };

export async function handshake(connection: ClientConnection, host: HandshakeHost): Promise<HandshakeOutcome> {
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
    host.introduced(init.agentInfo, quirks);
    host.log(`initialized ${init.agentInfo ? `${init.agentInfo.name} ${init.agentInfo.version}` : 'an agent without agentInfo'}`);
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

    step = 'session/new';
    const created = await withTimeout(
      connection.agent.request('session/new', { cwd: host.workspace, mcpServers: [] }),
      bound,
      `${label} did not answer session/new within ${seconds} s.`,
    );
    const session = new AcpSessionChannel(connection, created.sessionId);
    host.sessionCreated(session);
    guard.sessionCreated(created.modes);

    const choice = choosePlanMode(label, created);
    if (!choice.ok) return { ok: false, message: choice.message };
    guard.planModeChosen(choice.target);
    step = 'the switch to plan mode';
    await withTimeout(session.enterPlanMode(choice.target), bound, `${label} did not switch to plan mode within ${seconds} s.`);
    guard.enteredPlanMode();
    host.log(`session ${created.sessionId} in plan mode "${guard.mode}"`);

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
    const context = step === 'session/new' ? `${label} refused session/new` : `${label} failed during ${step}`;
    const loginHint = step === 'session/new' || step === 'authenticate' ? quirks?.loginHint : undefined;
    return { ok: false, context, error, loginHint };
  }
}
