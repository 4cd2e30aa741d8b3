// Who a session belongs to, and who else may see and decide it. Stored with the session by both
// stores (the journal's meta.json, PostgreSQL's sessions row); decided here, in one place, for
// every route and both stores (docs/identity.md).
import * as z from 'zod';

/**
 * The creator of a session, as their token said at creation: `sub` (the issuer's stable user id),
 * a name for people, and the groups they were in then (review sharing reads those).
 */
export const SessionOwnerSchema = z.object({
  sub: z.string().min(1),
  name: z.string().nullable(),
  groups: z.array(z.string()),
});
export type SessionOwner = z.infer<typeof SessionOwnerSchema>;

/** Whoever a request was authenticated as. */
export type Principal =
  /** The single shared token (one-person setups, the local service): sees every session. */
  | { kind: 'shared_token' }
  /** --insecure-no-auth on loopback: sees every session. */
  | { kind: 'anonymous' }
  | UserPrincipal;

export interface UserPrincipal {
  kind: 'user';
  sub: string;
  name: string | null;
  /** Every group the token names (stored as the owner's groups on sessions they create). */
  groups: string[];
  /** Those of their groups that are configured review groups: they see sessions shared there. */
  reviewGroups: string[];
  admin: boolean;
}

/**
 * Which sessions a principal may list, read, stream and decide: all (`null`), or those it owns
 * and those whose owner shares one of its review groups.
 */
export type Visibility = { sub: string; reviewGroups: readonly string[] } | null;

export function visibilityOf(principal: Principal): Visibility {
  if (principal.kind !== 'user' || principal.admin) return null;
  return { sub: principal.sub, reviewGroups: principal.reviewGroups };
}

/**
 * Whether a session owned by `owner` is visible. A session without an owner (made with the shared
 * token, or before identity) is visible only to those who see everything.
 */
export function isVisible(visibility: Visibility, owner: SessionOwner | null): boolean {
  if (visibility === null) return true;
  if (owner === null) return false;
  if (owner.sub === visibility.sub) return true;
  return visibility.reviewGroups.some((group) => owner.groups.includes(group));
}

/** The owner a new session gets from its creator: nobody for the shared token. */
export function ownerFor(principal: Principal): SessionOwner | null {
  if (principal.kind !== 'user') return null;
  return { sub: principal.sub, name: principal.name, groups: principal.groups };
}

/** How the session names its owner on the wire: the id and the name, never the groups. */
export function publicOwner(owner: SessionOwner | null | undefined): { id: string; name: string | null } | null {
  return owner ? { id: owner.sub, name: owner.name } : null;
}

/** Who acted, for audit lines. */
export interface AuditActor {
  sub: string;
  name: string | null;
  /** A user's groups as their token names them now (an approval under a group's quorum reads them). */
  groups?: readonly string[];
}

export function actorOf(principal: Principal): AuditActor {
  if (principal.kind === 'user') return { sub: principal.sub, name: principal.name, groups: principal.groups };
  return { sub: principal.kind, name: null };
}
