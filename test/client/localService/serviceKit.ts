// Shared by the local service suites: a fresh service folder per test, launcher options that run
// the real built dist/server.mjs, a client over the socket, and cleanup of every service started.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setPlanModeEvent, userMessageEvent } from '../../../src/core/protocol';
import { SessionsClient } from '../../../src/client/sessionsClient';
import { withAgentLaunch, type AgentLaunch } from '../../../src/core/agentLaunch';
import type { ServiceConnection, ServiceLauncherOptions } from '../../../src/client/localService/serviceLauncher';
import { servicePaths } from '../../../src/core/node/servicePaths';
import { socketFetch } from '../../../src/client/localService/socketFetch';
import { EXAMPLES_DIR, SERVER_JS, ensureServerBuilt } from '../../support/serverProcess';
import { SERVICE_DIR_ENV, stopServices } from '../../support/serviceProcess';

const made: string[] = [];

/** A service folder of its own, in a parent any user may pass through (so only our modes protect it). */
export function serviceDir(): string {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'up-svc-'));
  chmodSync(parent, 0o755);
  made.push(parent);
  return path.join(parent, 's');
}

export function launcherOptions(dir: string, version = '1.0.0', extra: Partial<ServiceLauncherOptions> = {}): ServiceLauncherOptions {
  ensureServerBuilt();
  return {
    paths: servicePaths({ env: { [SERVICE_DIR_ENV]: dir } }),
    version,
    serverScript: SERVER_JS,
    idleExitSeconds: 0,
    startTimeoutMs: 20_000,
    ...extra,
  };
}

export function scripted(scenario: string): AgentLaunch {
  return { kind: 'scripted', file: path.join(EXAMPLES_DIR, scenario), label: `Demo (${scenario})` };
}

export function clientOf(connection: ServiceConnection): SessionsClient {
  return new SessionsClient({
    baseUrl: 'http://localhost',
    getToken: async () => connection.token,
    fetch: socketFetch(connection.place.socket),
  });
}

/** A session on the service running `launch`, in plan mode like the extension's. */
export async function createSession(client: SessionsClient, launch: AgentLaunch | null, prompt = 'plan the change'): Promise<string> {
  const request = {
    title: prompt,
    events: [setPlanModeEvent(`set-mode-${randomUUID()}`), userMessageEvent(prompt)].map((data) => ({ type: 'event' as const, data })),
  };
  return (await client.createSession(launch ? withAgentLaunch(request, launch) : request)).id;
}

/** Stops every service started from the folders of this suite and removes them. */
export async function cleanUpServices(): Promise<void> {
  for (const parent of made.splice(0)) {
    await stopServices(path.join(parent, 's'));
    rmSync(parent, { recursive: true, force: true });
  }
}
