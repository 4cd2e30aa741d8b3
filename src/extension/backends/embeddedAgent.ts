// What the embedded backend runs for a session, apart from both the backends that use it and the
// agent sources that make it, so neither imports the other for a type.
import type { AgentLaunch } from '../../core/agentLaunch';
import type { UltraplanSettings } from '../settings/settingsSchema';

/** What the local session service runs for a session: an ACP agent (acpAgentSource.ts) or the scripted demo. */
export interface EmbeddedAgent {
  /** Sent with the session's creation; the service starts the agent from it. */
  launch: AgentLaunch;
  /** For people: "Demo (scripted)", "Scripted scenario (x.json)", "Claude (ACP)". */
  label: string;
  /** Scripted demo: labelled as a demo everywhere it shows. */
  demo: boolean;
  /** Shown when a session starts with this agent (e.g. the demo runs because no agent was found). */
  notice?: string;
}

export type EmbeddedAgentSource = (settings: UltraplanSettings) => Promise<EmbeddedAgent>;
