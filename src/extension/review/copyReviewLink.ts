// "Ultraplan: Copy Review Link": a link to the session's review page on its server
// (ultraplan-server /review/<id>, docs/team.md), copied to the clipboard for a phone, a chat or a
// colleague. The server makes the link: with its shared token, one that works once and expires
// (the link is the sign-in); on a team server, the plain page behind the issuer's sign-in.
// Loaded with its first use.
import * as vscode from 'vscode';
import * as z from 'zod';
import { errorMessage } from '../../core/errors';
import { PHASE_LABELS } from '../../core/phase';
import type { HttpBackend } from '../../client/httpBackend';
import type { ExtensionServices } from '../commands/services';
import type { FollowedSession } from '../sessions/followedSession';

/** The server's answer (src/service/http/reviewPage/reviewPageRoutes.ts, mintLink). */
const ReviewLinkSchema = z.strictObject({
  path: z.string().regex(/^\/review\/[A-Za-z0-9_-]+(\?link=[A-Za-z0-9_-]+)?$/, 'must be a review page path'),
  /** The whole link, from a server that knows its public origin (--public-url). */
  url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional(),
  one_time: z.boolean(),
  expires_at: z.string().max(64).nullable(),
});

export const REVIEW_LINKS_PATH = '/v1/ultraplan/review-links';

function onServer(session: FollowedSession): boolean {
  return session.backend.kind === 'server' && (session.backend as Partial<HttpBackend>).client !== undefined;
}

async function pick(services: ExtensionServices, key: string | undefined): Promise<FollowedSession | undefined> {
  if (key !== undefined) return services.sessions.get(key);
  const candidates = services.sessions.ordered(onServer);
  if (candidates.length <= 1) return candidates[0];
  const picked = await vscode.window.showQuickPick(
    candidates.map((c) => ({ label: c.title, description: `${PHASE_LABELS.words[c.phase]} · ${c.backend.label}`, c })),
    { title: 'Ultraplan: Copy the review link of which session?' },
  );
  return picked?.c;
}

/** Copies the review link of the session `key` names (else the person picks a server session). */
export async function copyReviewLink(services: ExtensionServices, key: string | undefined): Promise<void> {
  await services.sessions.restored;
  const session = await pick(services, key);
  if (!session) {
    void vscode.window.showInformationMessage(
      'Ultraplan: no session on a server to link to (the review page is served by ultraplan-server).',
    );
    return;
  }
  if (!onServer(session)) {
    void vscode.window.showInformationMessage(
      `Ultraplan: "${session.title}" runs on ${session.backend.label}, which serves no review page; sessions on an ultraplan-server have one.`,
    );
    return;
  }
  const client = (session.backend as HttpBackend).client;
  let link: z.infer<typeof ReviewLinkSchema>;
  try {
    const answer = await client.http.json({
      method: 'POST',
      path: REVIEW_LINKS_PATH,
      body: { session_id: session.sessionId },
      subject: `the review link of session ${session.sessionId}`,
    });
    link = client.http.check(ReviewLinkSchema, answer, 'review link');
  } catch (err) {
    services.log.warn(`[${session.key}] review link: ${errorMessage(err)}`);
    void vscode.window.showErrorMessage(`Ultraplan: the server gave no review link: ${errorMessage(err)}`);
    return;
  }
  // The server's public link when it has one (a proxy, a load balancer), else its address as this
  // window reaches it (a path prefix behind a proxy kept).
  const url =
    link.url !== undefined && new URL(link.url).pathname + new URL(link.url).search === link.path
      ? link.url
      : `${client.baseUrl.replace(/\/+$/, '')}${link.path}`;
  await vscode.env.clipboard.writeText(url);
  // The one-time token is a credential: never in the log.
  services.log.info(`[${session.key}] review link copied (${link.one_time ? 'one-time' : 'sign-in'})`);
  const minutes = link.expires_at ? Math.max(1, Math.round((Date.parse(link.expires_at) - Date.now()) / 60_000)) : 0;
  void vscode.window.showInformationMessage(
    link.one_time
      ? `Ultraplan: review link copied. It opens the review once, in one browser, within ${minutes} minutes.`
      : 'Ultraplan: review link copied. Whoever opens it signs in with the team’s issuer and sees it if they may review this session.',
  );
}
