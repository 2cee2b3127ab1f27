import type { MemberNotificationsStore } from '../../store/member-notifications.store.js';
import { fail, ok, type Result } from '../errors.js';
import type { NotificationView } from './notification.view.js';
import type { Page } from './users.service.js';

/** The statement of MemberNotificationsStore this uses (a narrow port). */
export type MemberNotificationsStatements = Pick<MemberNotificationsStore, 'list' | 'unreachableCounts'>;

/** What each member was sent (docs/lifecycle.md, "What each member was sent"). */
export class MemberNotificationsService {
  constructor(private readonly store: MemberNotificationsStatements) {}

  async list(projectId: string, userId: string, page: Page): Promise<Result<{ items: NotificationView[]; total: number }>> {
    const found = await this.store.list(projectId, userId, page);
    return found ? ok(found) : fail('NOT_FOUND', 'User not found');
  }

  /** How many members the bot could not reach, by platform and reason (`dm_closed`, `bot_blocked`, `no_conversation`). */
  unreachable(projectId: string): Promise<{ platform: string; reason: string; count: number }[]> {
    return this.store.unreachableCounts(projectId);
  }
}
