import { allows, ALL_PERMISSIONS, type Permission } from '../admins/permissions.js';
import type { SignInMethod } from './dashboard.types.js';

/** Who is acting in a dashboard request: the session, its project, and the permissions read now. */
export interface Actor {
  projectId: string;
  projectName: string;
  sessionId: string;
  /** The admin; null: the project's owner (all permissions). */
  userId: string | null;
  /** The admin's name as the project knows it; null for the owner or an admin without one. */
  name: string | null;
  method: SignInMethod;
  permissions: readonly string[];
}

/** The owner's permissions. */
export const OWNER_PERMISSIONS: readonly string[] = [ALL_PERMISSIONS];

/** Whether the actor may do `needed`: `all`, or that exact permission (AdminsService.may's rule). */
export function may(actor: Pick<Actor, 'permissions'>, needed: Permission): boolean {
  return allows(actor.permissions, needed);
}

/** How the actor is named on pages and in the audit log. */
export function actorLabel(a: { userId: string | null; name: string | null }): string {
  if (a.userId === null) return 'Owner';
  return a.name ? `${a.name} (${a.userId})` : a.userId;
}
