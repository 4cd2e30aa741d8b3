// Asked by the bootstrap at startup: does this user's local session service already run, with a
// planning session of this folder at work or waiting on a person (another window started it)?
// Then the rest of the extension loads and follows it (SessionsFromOtherWindows), so the status
// bar and the inbox show it with no command run. Looking never starts a service and never makes a
// folder or a token: a missing token, socket or answer is "no". Plain Node and no zod, so the
// bootstrap stays small: the answer is only a hint, the rest checks every session it follows.
import { lstat, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { servicePaths, servicePlace, type ServicePathsEnvironment } from '../core/node/servicePaths';

/** The session_context keys of the window's folder and of a session's purpose (core/agentLaunch.ts, core/sessionPurpose.ts). */
const WORKSPACE = 'ultraplan_workspace';
const PURPOSE = 'ultraplan_purpose';
const LIVE = new Set(['running', 'requires_action']);
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Listed {
  session_status?: unknown;
  session_context?: Record<string, unknown> | null;
}

function getJson(socketPath: string, token: string, route: string, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: route, headers: { authorization: `Bearer ${token}` }, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        if (body.length > MAX_BODY_BYTES) req.destroy();
      });
      res.once('end', () => {
        try {
          resolve(res.statusCode === 200 ? JSON.parse(body) : null);
        } catch {
          resolve(null);
        }
      });
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(null));
    req.end();
  });
}

/**
 * True when this version's running service holds a live planning session of `folder`. Never
 * throws; `environment` is for tests (the service folder).
 */
export async function folderHasLiveSession(
  version: string,
  folder: string,
  options: { timeoutMs?: number; environment?: ServicePathsEnvironment } = {},
): Promise<boolean> {
  try {
    const place = servicePlace(servicePaths(options.environment), version);
    // Named pipes (Windows) carry no owner to check; the window looks there once the rest loads.
    if (place.paths.pipePrefix) return false;
    // The token goes only to a socket of our own, as the launcher's requests do.
    const socket = await lstat(place.socket);
    if (!socket.isSocket() || socket.uid !== process.getuid?.()) return false;
    const token = (await readFile(place.paths.tokenFile, 'utf8')).trim();
    if (!token) return false;
    const listed = (await getJson(place.socket, token, '/v1/sessions', options.timeoutMs ?? 2_000)) as { data?: unknown } | null;
    if (!listed || !Array.isArray(listed.data)) return false;
    return (listed.data as Listed[]).some(
      (session) =>
        LIVE.has(String(session.session_status)) &&
        session.session_context?.[WORKSPACE] === folder &&
        session.session_context?.[PURPOSE] !== 'review',
    );
  } catch {
    return false;
  }
}
