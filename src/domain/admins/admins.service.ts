import type { AdminsStore } from '../../store/admins.store.js';
import { fail, ok, type Result } from '../errors.js';
import type { AdminView } from './admin.view.js';
import { allows, distinct, GRANTABLE, unknownPermissions, type Permission } from './permissions.js';

/** The statements of AdminsStore this uses (a narrow port: tests give it a small twin). */
export type AdminsStatements = Pick<AdminsStore, 'add' | 'get' | 'list' | 'remove' | 'replace'>;

/**
 * A project's admins: users of the project given permissions (docs/dashboard.md, "Admins"). An
 * admin must be a user the project has seen; removing one leaves the user as they were.
 */
export class AdminsService {
  constructor(private readonly store: AdminsStatements) {}

  list(projectId: string, page: { limit: number; offset: number }): Promise<{ items: AdminView[]; total: number }> {
    return this.store.list(projectId, page);
  }

  /** One admin of the project; null when the user is not one. */
  get(projectId: string, userId: string): Promise<AdminView | null> {
    return this.store.get(projectId, userId);
  }

  /** The grantable permission strings: the catalogue and `all`. */
  permissions(): readonly string[] {
    return GRANTABLE;
  }

  async add(projectId: string, userId: string, permissions: readonly string[]): Promise<Result<AdminView>> {
    const refused = checkPermissions(permissions);
    if (refused) return refused;
    const added = await this.store.add(projectId, userId, distinct(permissions));
    if (added === 'no_user') return fail('NOT_FOUND', 'User not found');
    if (added === 'duplicate') return fail('CONFLICT', `User ${userId} is already an admin`);
    return ok(added);
  }

  async update(projectId: string, userId: string, permissions: readonly string[]): Promise<Result<AdminView>> {
    const refused = checkPermissions(permissions);
    if (refused) return refused;
    const admin = await this.store.replace(projectId, userId, distinct(permissions));
    return admin ? ok(admin) : fail('NOT_FOUND', 'Admin not found');
  }

  async remove(projectId: string, userId: string): Promise<Result<null>> {
    return (await this.store.remove(projectId, userId)) ? ok(null) : fail('NOT_FOUND', 'Admin not found');
  }

  /** Whether the user is an admin of the project allowed `needed` (what dashboard actions ask before acting). */
  async may(projectId: string, userId: string, needed: Permission): Promise<boolean> {
    const admin = await this.store.get(projectId, userId);
    return admin !== null && allows(admin.permissions, needed);
  }
}

function checkPermissions(permissions: readonly string[]): Result<never> | null {
  const unknown = unknownPermissions(permissions);
  return unknown.length === 0 ? null : fail('VALIDATION_ERROR', `Unknown permissions: ${unknown.join(', ')}`);
}
