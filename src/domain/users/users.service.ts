import type { UsersStore } from '../../store/users.store.js';
import { fail, ok, type Result } from '../errors.js';
import type { BanView, UserView } from './user.view.js';

/** The statements of UsersStore this uses (a narrow port: tests give it a small twin). */
export type UsersStatements = Pick<UsersStore, 'ban' | 'get' | 'list' | 'unban'>;

export interface Page {
  limit: number;
  offset: number;
}

export const SEARCH_MIN = 3;
export const SEARCH_MAX = 100;

/** Users and bans (docs/api-keys-settings-users.md, "Users", "Bans"). A ban stops new memberships (MembershipsStore.create). */
export class UsersService {
  constructor(private readonly store: UsersStatements) {}

  list(projectId: string, page: Page): Promise<{ items: UserView[]; total: number }> {
    return this.store.list(projectId, page);
  }

  async get(projectId: string, userId: string): Promise<Result<UserView>> {
    const user = await this.store.get(projectId, userId);
    return user ? ok(user) : fail('NOT_FOUND', 'User not found');
  }

  /** Case-insensitive substring search on id, first name and username; at least 3 characters. */
  async search(projectId: string, term: string, page: Page): Promise<Result<{ items: UserView[]; total: number }>> {
    const trimmed = term.trim();
    if (trimmed.length < SEARCH_MIN || trimmed.length > SEARCH_MAX) {
      return fail('VALIDATION_ERROR', `search must be ${SEARCH_MIN} to ${SEARCH_MAX} characters`);
    }
    return ok(await this.store.list(projectId, { ...page, search: trimmed }));
  }

  async ban(projectId: string, userId: string, bannedBy: string, reason: string | null): Promise<Result<BanView>> {
    const banned = await this.store.ban(projectId, userId, bannedBy, reason?.trim() || null);
    return banned ? ok(banned) : fail('CONFLICT', `User ${userId} is already banned`);
  }

  async unban(projectId: string, userId: string): Promise<Result<null>> {
    return (await this.store.unban(projectId, userId)) ? ok(null) : fail('NOT_FOUND', 'User not found in ban list');
  }
}
