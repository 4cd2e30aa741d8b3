// In-host: FollowedSessions against the real VS Code API, with an in-memory backend behind its
// Backends seam and workspace trust behind its WorkspaceTrust seam. Restoring after a reload in
// Restricted Mode waits for trust and re-attaches once it is granted; each panel request is routed
// by its session key and answered sent or refused; Choose Backend's writes land where the value
// that applies lives.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { bindingFor } from '../../../src/core/decision';
import { PERSISTED_SESSIONS_KEY, type PersistedSession } from '../../../src/core/persistedSessions';
import { SETTING_DEFAULTS } from '../../../src/extension/settings/settingsSchema';
import { writeSetting } from '../../../src/extension/settings/settings';
import { FollowedSessions } from '../../../src/extension/sessions/followedSessions';
import type { WorkspaceTrust } from '../../../src/extension/sessions/workspaceTrust';
import { SessionsFromOtherWindows } from '../../../src/extension/sessions/sessionsFromOtherWindows';
import type { SessionResource } from '../../../src/core/protocol';
import { WORKSPACE_KEY } from '../../../src/core/agentLaunch';
import { continueAfterExecution } from '../../../src/extension/sessions/continueAfterExecution';
import { MemoryBackend } from '../../support/memoryBackend';
import { approve, exitPlan, toolRequest } from '../../support/sessionEvents';
import { waitFor } from '../../support/wait';

const EXTENSION_ID = 'ultraplan.ultraplan';

class Memento implements vscode.Memento {
  readonly #values = new Map<string, unknown>();
  /** While set, updates wait for it (a write under way, as workspaceState's goes to another process). */
  hold: Promise<void> | undefined;
  /** Updates waiting for `hold` now. */
  held = 0;
  keys(): readonly string[] {
    return [...this.#values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return (this.#values.has(key) ? this.#values.get(key) : fallback) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    if (this.hold) {
      this.held++;
      await this.hold;
      this.held--;
    }
    if (value === undefined) this.#values.delete(key);
    else this.#values.set(key, value);
  }
}

class SwitchableTrust implements WorkspaceTrust {
  isTrusted = false;
  readonly #emitter = new vscode.EventEmitter<void>();
  onDidGrant(listener: () => unknown): vscode.Disposable {
    return this.#emitter.event(listener);
  }
  grant(): void {
    this.isTrusted = true;
    this.#emitter.fire();
  }
}

function persisted(key: string, backendKind: PersistedSession['backendKind']): PersistedSession {
  return {
    key,
    backendKind,
    backendLabel: 'Memory',
    sessionId: key.split(':')[1]!,
    title: `restored ${key}`,
    createdAt: Date.now() - 60_000,
    phaseChangedAt: Date.now() - 30_000,
    cursor: null,
    phase: 'planning',
    revisions: [],
    drafts: [],
    usedBindings: [],
    finished: false,
  };
}

function exitPlanEvents(id: string, plan: string) {
  return [
    { type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id, name: 'ExitPlanMode', input: { plan } }] } },
    {
      type: 'control_request',
      request_id: `req-${id}`,
      request: { subtype: 'can_use_tool', tool_name: 'ExitPlanMode', tool_use_id: id, input: { plan } },
    },
  ];
}

describe('FollowedSessions (real VS Code API, in-memory backend)', function () {
  this.timeout(60_000);
  let log: vscode.LogOutputChannel;
  let extensionUri: vscode.Uri;
  const open: FollowedSessions[] = [];

  before(() => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not installed`);
    extensionUri = extension.extensionUri;
    log = vscode.window.createOutputChannel('Ultraplan followed sessions (test)', { log: true });
  });
  after(async () => {
    for (const s of open) await s.close();
    log.dispose();
  });

  function followed(workspaceState: Memento, backend: MemoryBackend, trust: WorkspaceTrust, calls: string[]): FollowedSessions {
    const sessions = new FollowedSessions({
      context: { workspaceState, extensionUri },
      log,
      settings: { read: () => ({ ...SETTING_DEFAULTS, pollIntervalMs: 250 }) },
      backends: {
        forRestored: async (kind, _settings, _url, options) => {
          calls.push(`forRestored ${kind}${options?.readOnly ? ' read-only' : ''}`);
          return backend;
        },
        forNewSession: async () => ({ backend, demo: false }),
        hasServerToken: async () => true,
      },
      trust,
    });
    open.push(sessions);
    return sessions;
  }

  it('an embedded session restored in Restricted Mode waits for trust, then re-attaches and is followed', async () => {
    const state = new Memento();
    await state.update(PERSISTED_SESSIONS_KEY, [persisted('embedded:s_trust', 'embedded'), persisted('server:s_remote', 'server')]);
    const backend = new MemoryBackend();
    backend.push(...exitPlanEvents('toolu_t', '# Trusted plan'));
    const trust = new SwitchableTrust();
    const calls: string[] = [];
    const sessions = followed(state, backend, trust, calls);
    await sessions.restored;
    assert.deepEqual(calls, ['forRestored server'], 'the embedded session does not start an agent without trust');
    const waiting = sessions.get('embedded:s_trust');
    assert.ok(waiting);
    assert.match(waiting.snapshot.panel.outcome?.text ?? '', /Waiting for workspace trust/);
    assert.equal(waiting.finished, false, 'not given up on');
    trust.grant();
    await waitFor(() => (calls.includes('forRestored embedded') ? true : undefined), { timeoutMs: 10_000, message: 'the re-attach' });
    const followedNow = await waitFor(
      () => (sessions.get('embedded:s_trust')?.phase === 'plan_ready' ? sessions.get('embedded:s_trust') : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 50,
        message: 'the re-attached session to reach its plan',
      },
    );
    assert.equal(followedNow.snapshot.panel.outcome, undefined, 'the waiting notice is gone');
    const stored = state.get<PersistedSession[]>(PERSISTED_SESSIONS_KEY) ?? [];
    assert.equal(stored.find((s) => s.key === 'embedded:s_trust')?.finished, false);
  });

  it('answers each panel request once, routed by its session key: sent, then refused with the reason', async () => {
    const state = new Memento();
    await state.update(PERSISTED_SESSIONS_KEY, [persisted('server:s_panel', 'server')]);
    const backend = new MemoryBackend();
    backend.push(...exitPlanEvents('toolu_p', '# Panel plan'));
    const sessions = followed(state, backend, { isTrusted: true, onDidGrant: () => new vscode.Disposable(() => undefined) }, []);
    await sessions.restored;
    const controller = await waitFor(() => (sessions.get('server:s_panel')?.canDecide ? sessions.get('server:s_panel') : undefined), {
      timeoutMs: 20_000,
      intervalMs: 50,
      message: 'a decidable plan',
    });
    const binding = bindingFor(controller.sessionId, 'toolu_p', '# Panel plan');
    const unknown = await sessions.answer({ type: 'approve', requestId: 'r0', sessionKey: 'server:nobody', binding });
    assert.equal(unknown.result, 'refused');
    assert.deepEqual(await sessions.answer({ type: 'approve', requestId: 'r1', sessionKey: 'server:s_panel', binding }), {
      result: 'sent',
    });
    const again = await sessions.answer({ type: 'approve', requestId: 'r2', sessionKey: 'server:s_panel', binding });
    assert.equal(again.result, 'refused');
    assert.match(again.result === 'refused' ? again.reason : '', /already/);
    assert.equal(backend.sent.length, 1, 'one decision went out');
    assert.equal(controller.snapshot.panel.revisions[0]?.status, 'approved');
  });

  it('attach: a session started elsewhere is followed from its first event; again (either id form) it is only shown; read-only refuses and survives a restore', async () => {
    const trusted = { isTrusted: true, onDidGrant: () => new vscode.Disposable(() => undefined) };
    const settings = { ...SETTING_DEFAULTS, pollIntervalMs: 250 };
    const state = new Memento();
    const backend = new MemoryBackend();
    backend.push(...exitPlanEvents('toolu_a', '# Attached plan'));
    const calls: string[] = [];
    const sessions = followed(state, backend, trusted, calls);
    await sessions.restored;
    const attached = await sessions.attach({ backend, sessionId: 'session_attach1', serverUrl: 'http://127.0.0.1:9', settings });
    assert.equal(attached.key, 'server:cse_attach1');
    assert.equal(attached.title, 'started elsewhere');
    await waitFor(() => (attached.canDecide ? true : undefined), { timeoutMs: 20_000, intervalMs: 50, message: 'the replayed plan' });
    assert.equal(attached.snapshot.panel.revisions[0]?.plan, '# Attached plan');
    const again = await sessions.attach({ backend, sessionId: 'cse_attach1', serverUrl: 'http://127.0.0.1:9/', settings });
    assert.equal(again, attached, 'the same controller, only shown');
    assert.equal(sessions.all.length, 1);

    const readOnlyBackend = new MemoryBackend();
    readOnlyBackend.push(...exitPlanEvents('toolu_r', '# Read-only plan'));
    const reason = 'Read-only: no token is set for http://127.0.0.1:9 (test).';
    const readOnly = await sessions.attach({
      backend: readOnlyBackend,
      sessionId: 'session_ro1',
      serverUrl: 'http://127.0.0.1:9',
      settings,
      readOnly: reason,
    });
    await waitFor(() => (readOnly.phase === 'plan_ready' ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 50,
      message: 'the read-only plan',
    });
    assert.equal(readOnly.snapshot.panel.canDecide, false);
    assert.equal(readOnly.snapshot.panel.notice?.text, reason);
    const answer = await sessions.answer({
      type: 'approve',
      requestId: 'r-ro',
      sessionKey: readOnly.key,
      binding: bindingFor(readOnly.sessionId, 'toolu_r', '# Read-only plan'),
    });
    assert.deepEqual(answer, { result: 'refused', reason });
    assert.equal(readOnlyBackend.sent.length, 0, 'nothing was sent');

    // A session attached while the sessions are being written is not in that write, and stays followed.
    let release = (): void => undefined;
    state.hold = new Promise((resolve) => (release = resolve));
    // Attaching writes the sessions at once: this write (with the new session in it) is held.
    const midAttach = sessions.attach({
      backend: new MemoryBackend(),
      sessionId: 'session_mid1',
      serverUrl: 'http://127.0.0.1:9',
      settings,
    });
    await waitFor(() => (state.held > 0 ? true : undefined), { timeoutMs: 5_000, intervalMs: 10, message: 'the write to be under way' });
    const lateBackend = new MemoryBackend();
    lateBackend.push(...exitPlanEvents('toolu_l', '# Late plan'));
    const lateAttach = sessions.attach({ backend: lateBackend, sessionId: 'session_late1', serverUrl: 'http://127.0.0.1:9', settings });
    await waitFor(() => sessions.get('server:cse_late1'), { timeoutMs: 5_000, intervalMs: 10, message: 'the late session to be followed' });
    release();
    state.hold = undefined;
    await midAttach;
    const late = await lateAttach;
    assert.equal(sessions.get(late.key), late, 'attached during a write, still followed');
    await waitFor(() => (late.canDecide ? true : undefined), { timeoutMs: 20_000, intervalMs: 50, message: 'the late plan' });

    await sessions.persistNow();
    const stored = state.get<PersistedSession[]>(PERSISTED_SESSIONS_KEY) ?? [];
    assert.equal(stored.find((s) => s.key === readOnly.key)?.readOnly, reason);
    const restoredCalls: string[] = [];
    const reloaded = followed(state, readOnlyBackend, trusted, restoredCalls);
    await reloaded.restored;
    assert.ok(restoredCalls.includes('forRestored server read-only'), restoredCalls.join(', '));
    assert.equal(reloaded.get(readOnly.key)?.readOnly, reason, 'still read-only after the reload');
  });

  it('a session another window on this folder started is followed here on its own, not over the panel; one this window let go is not', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder, 'the test window has a folder');
    const trusted = { isTrusted: true, onDidGrant: () => new vscode.Disposable(() => undefined) };
    const settings = { ...SETTING_DEFAULTS, backend: 'embedded' as const, pollIntervalMs: 250 };
    const state = new Memento();
    await state.update(PERSISTED_SESSIONS_KEY, [{ ...persisted('embedded:cse_letgo', 'embedded'), finished: true, phase: 'completed' }]);
    const backend = new MemoryBackend('embedded');
    backend.push(...exitPlanEvents('toolu_o', '# Another window plan'));
    const calls: string[] = [];
    const sessions = followed(state, backend, trusted, calls);
    await sessions.restored;
    const now = new Date().toISOString();
    const listed = (id: string, status: string, where: string): SessionResource =>
      ({
        type: 'session',
        id,
        title: id,
        session_status: status,
        created_at: now,
        updated_at: now,
        session_context: { [WORKSPACE_KEY]: where },
      }) as SessionResource;
    let running: SessionResource[] | null = null;
    const watcher = new SessionsFromOtherWindows({
      sessions,
      backends: { serviceSessionsIfRunning: async () => running, forRestored: async () => backend },
      settings: { read: () => settings },
      log,
      intervalMs: 60_000,
    });
    try {
      assert.equal(await sessions.forgetFinished(), 1, 'the person lets the finished session go');
      await watcher.check();
      assert.equal(sessions.all.length, 0, 'no service runs: nothing to follow');
      running = [
        listed('session_letgo', 'idle', folder),
        listed('session_other', 'requires_action', folder),
        listed('session_elsewhere', 'requires_action', '/another/folder'),
      ];
      const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label)).join(' | ');
      const tabsBefore = tabs();
      await watcher.check();
      assert.deepEqual(
        sessions.all.map((c) => c.key),
        ['embedded:cse_other'],
        'the live session of this folder, not the one let go nor another folder’s',
      );
      await waitFor(() => (sessions.get('embedded:cse_other')?.canDecide ? true : undefined), {
        timeoutMs: 20_000,
        intervalMs: 50,
        message: 'the plan of the session another window started',
      });
      assert.equal(tabs(), tabsBefore, 'the review panel was not taken');
      await watcher.check();
      assert.equal(sessions.all.length, 1, 'followed once');
    } finally {
      watcher.dispose();
    }
  });

  it('Continue on a session restored finished (no live backend here): attached again, the message sent, followed through the turn it opened to its end', async () => {
    const state = new Memento();
    await state.update(PERSISTED_SESSIONS_KEY, [persisted('server:s_cont', 'server')]);
    const backend = new MemoryBackend();
    const trusted: WorkspaceTrust = { isTrusted: true, onDidGrant: () => new vscode.Disposable(() => undefined) };
    backend.push(exitPlan('toolu_c', '# Two steps'), toolRequest('req_c', 'toolu_c'), approve('toolu_c', '# Two steps'));
    backend.push({ type: 'result', subtype: 'success', result: 'Step 1 done.' });
    const before = followed(state, backend, trusted, []);
    await waitFor(() => (before.get('server:s_cont')?.phase === 'completed' ? true : undefined), {
      timeoutMs: 20_000,
      message: 'the execution followed to its end',
    });
    await before.close();

    // The reload: the finished session is shown as it ended, with no live backend.
    const calls: string[] = [];
    const after = followed(state, backend, trusted, calls);
    await after.restored;
    const restored = after.get('server:s_cont');
    assert.ok(restored?.finished);
    assert.deepEqual(calls, [], 'a finished session is not attached at restore');
    backend.echoSent = true;
    const outcome = await continueAfterExecution(restored, 'Carry out step 2 now.', after);
    assert.deepEqual(outcome, { sent: true, followed: true });
    assert.deepEqual(calls, ['forRestored server']);
    assert.deepEqual(
      backend.sent.map((e) => e.type),
      ['user'],
      'the message went out once',
    );
    const continued = after.get('server:s_cont');
    assert.ok(continued && continued !== restored, 'the shown session was replaced by one followed live');
    // The replay sees the message open a turn after the first result, and does not stop there.
    await waitFor(() => (continued.phase === 'executing' ? true : undefined), { timeoutMs: 20_000, message: 'executing again' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(continued.phase, 'executing', 'still executing: the first result did not end the continued turn');
    backend.push({ type: 'result', subtype: 'success', result: 'Step 2 done.' });
    await waitFor(() => (continued.phase === 'completed' ? true : undefined), { timeoutMs: 20_000, message: 'the continued turn’s end' });
    assert.match(continued.snapshot.panel.outcome?.text ?? '', /Step 2 done\./);

    await after.close();

    // Its backend out of reach after another reload: refused with the reason, nothing sent.
    const unreachable = new FollowedSessions({
      context: { workspaceState: state, extensionUri },
      log,
      settings: { read: () => ({ ...SETTING_DEFAULTS, pollIntervalMs: 250 }) },
      backends: {
        forRestored: async () => {
          throw new Error('the server at http://127.0.0.1:9 did not answer');
        },
        forNewSession: async () => ({ backend, demo: false }),
        hasServerToken: async () => true,
      },
      trust: trusted,
    });
    open.push(unreachable);
    await unreachable.restored;
    const again = unreachable.get('server:s_cont');
    assert.ok(again?.finished);
    const refused = await continueAfterExecution(again, 'Carry out step 3 now.', unreachable);
    assert.equal(refused.sent, false);
    assert.match(
      refused.sent ? '' : refused.message,
      /sending the message to "restored server:s_cont" failed: the server at http:\/\/127\.0\.0\.1:9 did not answer/,
    );
    assert.equal(backend.sent.length, 1, 'nothing more was sent');
    assert.equal(unreachable.get('server:s_cont'), again, 'the finished session stays as it was');
  });

  it('Choose Backend writes a setting the workspace overrides where the workspace sets it', async () => {
    const config = () => vscode.workspace.getConfiguration('ultraplan');
    const before = config().inspect('pollIntervalMs');
    try {
      await config().update('pollIntervalMs', 1000, vscode.ConfigurationTarget.Workspace);
      await writeSetting('pollIntervalMs', 1500);
      assert.equal(config().get('pollIntervalMs'), 1500, 'the value that applies is the one written');
      assert.equal(config().inspect('pollIntervalMs')?.workspaceValue, 1500);
    } finally {
      await config().update('pollIntervalMs', before?.workspaceValue, vscode.ConfigurationTarget.Workspace);
      await config().update('pollIntervalMs', before?.globalValue, vscode.ConfigurationTarget.Global);
    }
  });
});
