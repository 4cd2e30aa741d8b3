// The Claude Code on the web backend (backend.ts: the login, eligibility, launch and the HTTP
// client behind them) is loaded the first time a person picks an environment, launches or
// re-attaches a session there; the extension without that backend never loads it. In the bundles
// it is a file of its own (dist/claude-web.js, scripts/lazy-files.cjs); under tsx (tests) it is
// the source module. Its errors are recognised across the two copies (hasErrorBrand).
import type { ClaudeWebAccessOptions } from './eligibility';
import type { ClaudeWebBackend, ClaudeWebBackendOptions, ClaudeWebBackendResult } from './backend';
import type { Environment } from './environment';

type BackendModule = typeof import('./backend');

let loaded: BackendModule | undefined;

function backendModule(): BackendModule {
  loaded ??= require('./backend') as BackendModule;
  return loaded;
}

/** Checks eligibility and builds the backend; throws the first failed check as a ClaudeWebError. */
export async function createClaudeWebBackend(options: ClaudeWebBackendOptions): Promise<ClaudeWebBackendResult> {
  return backendModule().createClaudeWebBackend(options);
}

/** A backend for re-attaching to sessions that already exist: only the login and the organization are checked. */
export async function attachClaudeWebBackend(options: ClaudeWebBackendOptions): Promise<ClaudeWebBackend> {
  return backendModule().attachClaudeWebBackend(options);
}

/** The environments for a picker, and the one the rules would choose. */
export async function listEnvironments(
  options: ClaudeWebAccessOptions & { environmentId?: string },
): Promise<{ environments: Environment[]; chosen: Environment | undefined; organizationUuid: string }> {
  return backendModule().listEnvironments(options);
}
