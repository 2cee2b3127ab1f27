import type { AccessError } from '../../store/access-worker.store.js';
import type { TelegramInvitesStore } from '../../store/telegram-invites.store.js';
import type { TelegramBotKey, TelegramUpdatesStore } from '../../store/telegram-updates.store.js';
import type { Transactor } from '../transactions.js';
import { accessKey, type AccessCompletionStatements } from './access-completions.js';

/**
 * What a Telegram update does to tenure's rows once its calls are made (docs/access-telegram.md:
 * joins, leaves, join requests, the bot's own rights), written with the update's handled mark in
 * one transaction. Which effects an update has is decided without side effects in
 * src/access/telegram/update-plan.ts; each effect's statement re-checks its row as it is then, so
 * an update handled late, or a row that moved meanwhile, ends right.
 */

/** The effects of one update, each optional. */
export interface UpdateEffects {
  /** A tenure link someone joined through: used (the first use kept), and revoked when `revoked`. */
  link?: { inviteLink: string; usedBy: string; revoked: boolean };
  /**
   * The user is in the chat: a granted row synced (`access.granted`, unless it was synced
   * already); a revoked one made pending, for the worker to remove them.
   */
  joined?: { targetId: string; userId: string };
  /** The member whose link someone else used: a row waiting for them pending again, for a fresh link. */
  relink?: { targetId: string; userId: string; error: AccessError };
  /** The user left or was removed: a granted synced row waits for them again. */
  left?: { targetId: string; userId: string; error: AccessError };
  /** The bot cannot act in the chat: the target unhealthy, its pending rows failed (`access.failed`). */
  targetFault?: { targetId: string; error: AccessError };
  /** The bot is an admin with the rights it needs again: the target healthy, its failed rows pending. */
  targetHealed?: { targetId: string };
}

export interface HandledResult {
  /** False when the lease was not held (or the bot changed): nothing was written. */
  held: boolean;
  /** False when it was handled already (or not held). */
  handled: boolean;
  /** `access.granted` events written. */
  granted: number;
}

/** The statements an update's handling writes with (src/store/telegram-updates.store.ts and its neighbours). */
export interface TelegramUpdateStatements {
  telegramUpdates: Pick<TelegramUpdatesStore, 'markHandled' | 'memberJoined' | 'relinkMember' | 'memberLeft' | 'healTarget'>;
  telegramInvites: Pick<TelegramInvitesStore, 'markLinkUsed'>;
  accessWorker: Pick<AccessCompletionStatements, 'failTargets'>;
}

/**
 * Marks an update handled with its effects, in one transaction, while `owner` holds the bot at
 * `now`: an update handled already, or a lease lost, writes nothing else, so a crash leaves an
 * update either unhandled, to be handled again, or handled with all its effects.
 */
export class TelegramUpdateHandling {
  constructor(private readonly transactor: Transactor<TelegramUpdateStatements>) {}

  handled(o: { owner: string; bot: TelegramBotKey; now: Date; updateId: number; effects: UpdateEffects }): Promise<HandledResult> {
    const { bot, now, effects: e } = o;
    const p = bot.projectId;
    return this.transactor.run(async ({ telegramUpdates, telegramInvites, accessWorker }) => {
      const mark = await telegramUpdates.markHandled(o.owner, bot, now, o.updateId);
      if (mark.generation === null || !mark.handled) return { held: mark.generation !== null, handled: false, granted: 0 };
      if (e.link) await telegramInvites.markLinkUsed(p, now, e.link);
      const granted = e.joined && (await telegramUpdates.memberJoined(p, now, e.joined)) ? 1 : 0;
      if (e.relink) await telegramUpdates.relinkMember(p, now, e.relink);
      if (e.left) await telegramUpdates.memberLeft(p, e.left);
      if (e.targetFault) {
        // The rows this update settled itself keep what it wrote: the fault fails the target's other pending rows.
        const spared = [e.joined, e.relink].flatMap((x) => (x && x.targetId === e.targetFault!.targetId ? [accessKey(x.targetId, x.userId)] : []));
        await accessWorker.failTargets(p, mark.generation, [e.targetFault], spared);
      }
      if (e.targetHealed) await telegramUpdates.healTarget(p, now, e.targetHealed.targetId);
      return { held: true, handled: true, granted };
    });
  }
}
