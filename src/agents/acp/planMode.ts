// Finding an ACP agent's plan mode and following its mode afterwards. Pure: the answers of
// session/new and the session/update notifications go in, decisions come out.
import type { NewSessionResponse, SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk' with {
  'resolution-mode': 'import',
};

/**
 * How the plan mode is switched on: a session mode, or a select config option (`mode`, or one
 * like Codex's `collaboration_mode`, whose session modes are permission presets instead).
 */
export type PlanModeTarget =
  { via: 'mode'; modeId: string; name: string } | { via: 'config_option'; configId: string; value: string; name: string };

export type PlanModeChoice = { ok: true; target: PlanModeTarget } | { ok: false; message: string };

interface ModeCandidate {
  id: string;
  name: string;
}

function pickPlan(candidates: readonly ModeCandidate[]): ModeCandidate | undefined {
  // `plan`, or a URL whose fragment or last segment is plan (Copilot's
  // https://agentclientprotocol.com/protocol/session-modes#plan), before any looser match.
  const exact = candidates.find((mode) => mode.id === 'plan' || /[#/]plan$/i.test(mode.id));
  if (exact) return exact;
  // An id or a name that says plan ("architect" modes do not count: they may write).
  return candidates.find((mode) => /plan/i.test(mode.id) || /plan/i.test(mode.name));
}

/** The `mode` select config option, if the agent offers one. */
export function modeConfigOption(
  options: readonly SessionConfigOption[] | null | undefined,
): (SessionConfigOption & { type: 'select' }) | undefined {
  for (const option of options ?? []) {
    if (option.type !== 'select') continue;
    if (option.id === 'mode' || option.category === 'mode') return option as SessionConfigOption & { type: 'select' };
  }
  return undefined;
}

/** Select config options about a mode: the `mode` option first, then any whose id or category says mode. */
function modeLikeConfigOptions(
  options: readonly SessionConfigOption[] | null | undefined,
): Array<SessionConfigOption & { type: 'select' }> {
  const selects = (options ?? []).filter((option): option is SessionConfigOption & { type: 'select' } => option.type === 'select');
  const first = modeConfigOption(selects);
  const rest = selects.filter((option) => option !== first && (/mode/i.test(option.id) || /mode/i.test(option.category ?? '')));
  return first ? [first, ...rest] : rest;
}

function configCandidates(option: SessionConfigOption & { type: 'select' }): ModeCandidate[] {
  const result: ModeCandidate[] = [];
  for (const entry of option.options as readonly unknown[]) {
    if (!entry || typeof entry !== 'object') continue;
    const record = entry as Record<string, unknown>;
    if (typeof record.value === 'string') {
      result.push({ id: record.value, name: typeof record.name === 'string' ? record.name : record.value });
    } else if (Array.isArray(record.options)) {
      // A grouped select: its groups hold the values.
      for (const inner of record.options as unknown[]) {
        const innerRecord = inner as Record<string, unknown> | null;
        if (innerRecord && typeof innerRecord.value === 'string') {
          result.push({ id: innerRecord.value, name: typeof innerRecord.name === 'string' ? innerRecord.name : innerRecord.value });
        }
      }
    }
  }
  return result;
}

/** Picks the plan mode from session/new's answer, or says which modes the agent offers instead. */
export function choosePlanMode(agentLabel: string, session: Pick<NewSessionResponse, 'modes' | 'configOptions'>): PlanModeChoice {
  const modes: SessionModeState | null | undefined = session.modes;
  const modeCandidates = (modes?.availableModes ?? []).map((mode) => ({ id: mode.id, name: mode.name }));
  const fromModes = pickPlan(modeCandidates);
  if (fromModes) return { ok: true, target: { via: 'mode', modeId: fromModes.id, name: fromModes.name } };

  const optionCandidates: ModeCandidate[] = [];
  for (const option of modeLikeConfigOptions(session.configOptions)) {
    const candidates = configCandidates(option);
    optionCandidates.push(...candidates);
    const fromOption = pickPlan(candidates);
    if (fromOption) return { ok: true, target: { via: 'config_option', configId: option.id, value: fromOption.id, name: fromOption.name } };
  }

  const offered = [...modeCandidates, ...optionCandidates];
  const list = offered.length
    ? offered.map((mode) => (mode.name && mode.name !== mode.id ? `${mode.id} ("${mode.name}")` : mode.id)).join(', ')
    : 'none';
  return {
    ok: false,
    message:
      `${agentLabel} has no plan mode, so Ultraplan cannot plan with it safely. ` +
      `Modes it offers: ${list}. Choose an agent with a plan mode in "Choose Backend…".`,
  };
}

/** The plan mode's id as the agent reports it back (mode id or config value). */
export function planModeId(target: PlanModeTarget): string {
  return target.via === 'mode' ? target.modeId : target.value;
}

/**
 * The current mode an update announces, if it announces one: `current_mode_update`, or a
 * `config_option_update` whose `mode` option changed (agents use either). When plan mode is a
 * config option of its own (`target`), only that option speaks for it: the session modes are
 * then something else (Codex's permission presets).
 */
export function modeFromUpdate(update: { sessionUpdate: string } & Record<string, unknown>, target?: PlanModeTarget): string | undefined {
  const ownOption = target?.via === 'config_option' && target.configId !== 'mode' ? target.configId : undefined;
  if (update.sessionUpdate === 'current_mode_update' && typeof update.currentModeId === 'string') {
    return ownOption ? undefined : update.currentModeId;
  }
  if (update.sessionUpdate === 'config_option_update' && Array.isArray(update.configOptions)) {
    const options = update.configOptions as SessionConfigOption[];
    const option = ownOption ? options.find((candidate) => candidate.id === ownOption) : modeConfigOption(options);
    if (option && typeof option.currentValue === 'string') return option.currentValue;
  }
  return undefined;
}

/** The session mode (a permission preset, for Codex) an update announces, whatever holds plan mode. */
export function sessionModeFromUpdate(update: { sessionUpdate: string } & Record<string, unknown>): string | undefined {
  return modeFromUpdate(update);
}
