// What the fake ACP agent's `probe` step reports (test/fixtures/fake-acp-agent): a hostile agent's
// own reads, listings, writes and model calls, said as a message chunk "PROBE <json>".

export interface ProbeOutcome {
  ok: boolean;
  code?: string;
  value?: unknown;
}

export interface AgentProbe {
  pid: number;
  env: Record<string, string>;
  read: Record<string, ProbeOutcome>;
  list: Record<string, ProbeOutcome>;
  write: Record<string, ProbeOutcome>;
  http: Record<string, ProbeOutcome>;
}

/** The plan mode the probing scenarios offer, as a real agent's session/new does. */
export const PROBE_PLAN_MODES = { currentModeId: 'default', availableModes: [{ id: 'plan', name: 'Plan' }] };

/** The first probe report among a session's events, or undefined while there is none. */
export function probeOf(
  events: ReadonlyArray<{ type?: string; message?: { content?: Array<{ text?: string }> } }>,
): AgentProbe | undefined {
  for (const event of events) {
    if (event.type !== 'assistant') continue;
    for (const block of event.message?.content ?? []) {
      const at = block.text?.indexOf('PROBE ') ?? -1;
      if (block.text && at >= 0) return JSON.parse(block.text.slice(at + 'PROBE '.length)) as AgentProbe;
    }
  }
  return undefined;
}

/** A scenario for the fake ACP agent whose first turn is one probe step (`read`, `list`, `write`, `http`). */
export function probeScenario(probe: Record<string, unknown>): string {
  return JSON.stringify({ modes: PROBE_PLAN_MODES, turns: [[{ probe }]] });
}
