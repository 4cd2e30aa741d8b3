// The variables that change what an agent the local service starts does (its key, its model's
// address, its own switches, from the catalogue), with PATH, HOME and the proxies: what the
// service's and a window's environment fingerprints cover (core/envFingerprint.ts).
import { BASE_AGENT_ENV_NAMES } from '../../core/envFingerprint';
import catalogue from './agents.json';

export const AGENT_ENV_NAMES: readonly string[] = [
  ...new Set([
    ...BASE_AGENT_ENV_NAMES,
    ...Object.values(catalogue).flatMap((agent) => [...agent.keyEnv, ...agent.baseUrlEnv, ...agent.passEnv]),
  ]),
].sort();
