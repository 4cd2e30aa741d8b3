// A followed session (the real FollowedSession) on any backend, for tests that drive it as the
// editor does but need no editor: a quiet log and a notifier that says nothing.
import { FollowedSession } from '../../src/extension/sessions/followedSession';
import type { SessionNotifier } from '../../src/extension/sessions/sessionNotifier';
import type { SessionBackend } from '../../src/core/sessionBackend';

export const quietLog = { trace() {}, info() {}, warn() {}, error() {}, show() {} };

export const silentNotifier: SessionNotifier = {
  say() {},
  showReview() {},
  openExternal() {},
  isReviewShowing: () => true,
  askPermission: async () => {},
};

/** Starts following `sessionId` on `backend`, polling every 50 ms. */
export function followSession(backend: SessionBackend, sessionId: string, timeoutMs = 90_000): FollowedSession {
  const controller = new FollowedSession({
    backend,
    log: quietLog,
    notifier: silentNotifier,
    pollIntervalMs: 50,
    timeoutMs,
    onSnapshot: () => undefined,
    from: { fresh: { key: `${backend.kind}:${sessionId}`, sessionId, title: 'test session', demo: false } },
  });
  controller.start();
  return controller;
}
