// "Ultraplan: Attach to Session…": follow a session that was started elsewhere (another window, a
// script, the browser). A picker lists the current backend's sessions (title, status, age; the ones
// already followed marked) and takes a pasted link or id; the session is then followed and
// reviewed like one started here (FollowedSessions.attach). The command also takes the link as an
// argument, for other views and for scripts. A chunk of its own, loaded by the command's first run
// (extension.ts registers the command).
import * as vscode from 'vscode';
import { parseAttachTarget, type AttachTarget } from '../../core/attachTarget';
import { SessionsError, errorMessage } from '../../core/errors';
import type { SessionResource } from '../../core/protocol';
import { describeListedSession } from '../../core/sessionListing';
import { purposeOf } from '../../core/sessionPurpose';
import { BACKENDS, type BackendKind } from '../../core/backendKinds';
import type { SessionBackend } from '../../core/sessionBackend';
import type { UltraplanSettings } from '../settings/settingsSchema';
import type { ExtensionServices } from './services';

/** Where sessions live: a backend kind and, for a server, its URL. */
interface BackendPlace {
  kind: BackendKind;
  serverUrl?: string;
}

/** A target with its backend settled: a bare id names a session on the backend chosen now. */
interface ResolvedTarget extends BackendPlace {
  sessionId: string;
}

type PickItem = vscode.QuickPickItem & { target?: AttachTarget };

/** The command's run: a link or id given as `input`, else the picker. */
export async function attachSession(services: ExtensionServices, input?: unknown): Promise<void> {
  await services.sessions.restored;
  const settings = services.settings.read();
  let target: AttachTarget | undefined;
  if (typeof input === 'string') {
    const parsed = parseAttachTarget(input);
    if (!parsed.ok) {
      void vscode.window.showErrorMessage(`Ultraplan: cannot attach: ${parsed.error}`);
      return;
    }
    target = parsed.target;
  } else {
    target = await pickTarget(services, settings);
  }
  if (target) await attachTo(services, settings, resolve(target, settings));
}

/** The backend the settings choose now. */
function currentPlace(settings: UltraplanSettings): BackendPlace {
  const kind = settings.backend;
  return kind === 'server' ? { kind, serverUrl: settings['server.url'] } : { kind };
}

function resolve(target: AttachTarget, settings: UltraplanSettings): ResolvedTarget {
  if (target.backend === 'server') return { kind: 'server', sessionId: target.sessionId, serverUrl: target.serverUrl };
  if (target.backend === 'claude-web') return { kind: 'claude-web', sessionId: target.sessionId };
  if (target.backend === 'jules') return { kind: 'jules', sessionId: target.sessionId };
  return { ...currentPlace(settings), sessionId: target.sessionId };
}

/**
 * The backend a target's session lives on. A server is read with the token stored for its own
 * origin (never another origin's); without one, it is read without a token, read-only (only a
 * server that runs without a token answers that).
 */
async function backendFor(
  services: ExtensionServices,
  settings: UltraplanSettings,
  target: BackendPlace,
): Promise<{ backend: SessionBackend; readOnly?: string; serverUrl?: string }> {
  if (target.kind === 'server') {
    const url = target.serverUrl ?? settings['server.url'];
    if (await services.backends.hasServerToken(url)) return { backend: services.backends.server(url), serverUrl: url };
    return { backend: services.backends.tokenlessServer(url), readOnly: noTokenReadOnly(url), serverUrl: url };
  }
  return { backend: await services.backends.forRestored(target.kind, settings, undefined) };
}

/** Why a session on a server we hold no token for is followed read-only. */
export function noTokenReadOnly(serverUrl: string): string {
  return `Read-only: no token is set for ${new URL(serverUrl).origin}, and Ultraplan sends nothing to a server it holds no token for. Run "Ultraplan: Set Server Token…" for it, then attach this session again to decide here.`;
}

class NoServerToken extends Error {
  constructor(readonly serverUrl: string) {
    super(
      `${new URL(serverUrl).origin} refuses requests without its token, and none is set for it. Run "Ultraplan: Set Server Token…" for that server first.`,
    );
  }
}

/** A server that refused the tokenless read: it wants the token we do not have. */
function tokenMissing(err: unknown, readOnly: string | undefined, serverUrl: string | undefined): unknown {
  return readOnly !== undefined && serverUrl && err instanceof SessionsError && err.kind === 'unauthorized'
    ? new NoServerToken(serverUrl)
    : err;
}

async function attachTo(services: ExtensionServices, settings: UltraplanSettings, target: ResolvedTarget): Promise<void> {
  const { sessions, log } = services;
  try {
    const { backend, readOnly, serverUrl } = await backendFor(services, settings, target);
    await vscode.window
      .withProgress({ location: vscode.ProgressLocation.Notification, title: `Ultraplan: attaching to ${target.sessionId}…` }, () =>
        sessions.attach({
          backend,
          sessionId: target.sessionId,
          settings,
          ...(serverUrl ? { serverUrl } : {}),
          ...(readOnly !== undefined ? { readOnly } : {}),
        }),
      )
      .then(undefined, (err: unknown) => {
        throw tokenMissing(err, readOnly, serverUrl);
      });
  } catch (err) {
    const message = errorMessage(err);
    log.error(`attaching to ${target.sessionId} (${target.kind}) failed: ${message}`);
    if (err instanceof NoServerToken) {
      const set = 'Set Server Token…';
      const choice = await vscode.window.showErrorMessage(`Ultraplan: ${message}`, set);
      // The token for that link's server (the backend in use stays as it is), then the attach again.
      if (choice === set && (await vscode.commands.executeCommand<boolean>('ultraplan.setServerToken', err.serverUrl)) === true)
        await attachTo(services, settings, target);
      return;
    }
    void vscode.window.showErrorMessage(`Ultraplan: could not attach to ${target.sessionId}: ${message}`);
  }
}

/** The picker: the current backend's sessions (loaded while it is open), and whatever is pasted. */
async function pickTarget(services: ExtensionServices, settings: UltraplanSettings): Promise<AttachTarget | undefined> {
  const picker = vscode.window.createQuickPick<PickItem>();
  picker.title = 'Ultraplan: Attach to Session';
  picker.placeholder =
    'Pick a session, or paste a link (https://claude.ai/code/session_…, https://jules.google.com/session/…, a server URL with a session id) or an id';
  picker.matchOnDescription = true;
  picker.matchOnDetail = true;
  picker.ignoreFocusOut = true;
  let listed: PickItem[] = [];
  const pasted = (): PickItem[] => {
    const value = picker.value.trim();
    if (value === '') return [];
    const parsed = parseAttachTarget(value);
    return [
      parsed.ok
        ? {
            label: `$(link) Attach to ${parsed.target.sessionId}`,
            description: describeTarget(parsed.target),
            alwaysShow: true,
            target: parsed.target,
          }
        : { label: `$(warning) ${parsed.error}`, alwaysShow: true },
    ];
  };
  const refresh = (): void => {
    picker.items = [...pasted(), ...listed];
  };
  picker.onDidChangeValue(refresh);
  const loading = new AbortController();
  picker.busy = true;
  void listItems(services, settings, loading.signal)
    .then((items) => (listed = items))
    .catch((err: unknown) => {
      const message = errorMessage(err);
      services.log.warn(`listing sessions to attach failed: ${message}`);
      listed = [{ label: `$(error) Could not list the sessions: ${message}`, alwaysShow: true, description: 'paste a link or id instead' }];
    })
    .finally(() => {
      picker.busy = false;
      refresh();
    });
  refresh();
  return new Promise<AttachTarget | undefined>((done) => {
    picker.onDidAccept(() => {
      const item = picker.selectedItems[0] ?? picker.activeItems[0];
      if (!item?.target) return; // a message row, or nothing yet: the picker stays open
      done(item.target);
      picker.hide();
    });
    picker.onDidHide(() => {
      loading.abort();
      done(undefined);
      picker.dispose();
    });
    picker.show();
  });
}

async function listItems(services: ExtensionServices, settings: UltraplanSettings, signal: AbortSignal): Promise<PickItem[]> {
  const here = currentPlace(settings);
  const { backend, readOnly, serverUrl } = await backendFor(services, settings, here);
  if (!backend.listSessions) return [{ label: `$(info) ${backend.label} lists no sessions`, description: 'paste a link or id' }];
  const listed = await backend.listSessions(signal).catch((err: unknown) => {
    throw tokenMissing(err, readOnly, serverUrl);
  });
  // A review's finder and verifier runs belong to the review; only planning sessions are offered.
  const planning = listed.filter((s) => purposeOf(s) === 'planning');
  if (planning.length === 0) return [{ label: `$(info) No planning sessions on ${backend.label}`, description: 'paste a link or id' }];
  const now = Date.now();
  return planning.map((s) => sessionItem(services, here, s, now));
}

function sessionItem(services: ExtensionServices, here: BackendPlace, s: SessionResource, now: number): PickItem {
  const followedPhase = services.sessions.followed(here.kind, s.id, here.serverUrl)?.phase;
  const followed = followedPhase !== undefined;
  const target: AttachTarget =
    here.kind === 'server' && here.serverUrl
      ? { backend: 'server', serverUrl: here.serverUrl, sessionId: s.id }
      : here.kind === 'claude-web' || here.kind === 'jules'
        ? { backend: here.kind, sessionId: s.id }
        : { backend: 'current', sessionId: s.id };
  const row = describeListedSession(s, now, followedPhase);
  return { label: `${followed ? '$(eye)' : '$(circle-outline)'} ${row.title}`, description: row.description, detail: row.detail, target };
}

function describeTarget(target: AttachTarget): string {
  if (target.backend === 'server') return `on ${target.serverUrl}`;
  if (target.backend === 'claude-web' || target.backend === 'jules') return `on ${BACKENDS[target.backend].label}`;
  return 'on the current backend';
}
