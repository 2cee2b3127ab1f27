import type { ClaimedAccess } from '../store/access-worker.store.js';
import type { CompletionRecorder } from './completion-recorder.js';
import type { BucketWait } from './connector.js';

/** What a bot's calls need of its outcomes' writer: hand one in, and how many are not written yet. */
export type OutcomeRecorder = Pick<CompletionRecorder, 'record' | 'unwritten'>;

/**
 * The access worker's state for one bot it holds, and which claimed rows to call next. Kept apart
 * from the worker's loop so the rules of "what next" read in one place:
 *
 * - one call per target at a time: an error that blames the target (50013, 10011…) is known
 *   before its next call is made, so a broken target costs one invalid request;
 * - rows of a target a call just blamed are not called (the write of that failure fails them);
 * - rows in a guild whose rate-limit bucket is empty wait here, not in the library: a call the
 *   library holds back for a bucket (its `rateLimited` event) does not count against the bot's
 *   concurrency, so a bot working in many guilds keeps its slots busy in the guilds that have
 *   room, instead of every slot waiting out one guild's 10-second window. A Telegram chat that
 *   answered 429 waits here the same way, for its `retry_after`.
 *
 * "Guild" below is the place a call is made in: a Discord guild, or a Telegram chat.
 */

export interface Call {
  row: ClaimedAccess;
  /** The request's path (`/guilds/…`), to tell which call a rate-limit event is about. */
  path: string | null;
  controller: AbortController;
  promise: Promise<void>;
  /** Held back by the library for a bucket until then (epoch ms); 0 when not. */
  waitingUntil: number;
}

/** The guild a row's call is made in: the bucket's major parameter. */
export function guildOf(row: Pick<ClaimedAccess, 'kind' | 'guildId' | 'externalId'>): string {
  return row.kind === 'role' ? (row.guildId ?? '') : row.externalId;
}

export class BotWork {
  /** Claimed, not called yet, in claim order. */
  buffer: ClaimedAccess[] = [];
  readonly calls = new Map<string, Call>();
  /**
   * Targets a call just blamed. Each entry is cleared once a claim that started after the failure
   * was written has ended (the target is unhealthy in the database then, and claims leave its rows
   * alone): the value is the number of the first such claim.
   */
  readonly faulted = new Map<string, number>();
  /** Guilds whose bucket is empty until then (epoch ms, the library's clock). */
  readonly limitedGuilds = new Map<string, number>();
  claims = 0;
  claiming = false;
  /** 401: no more calls with this token; the bot is let go once its calls are written. */
  unauthorized = false;
  /** Outcomes not written yet. */
  readonly writes = new Set<Promise<void>>();
  /** Claimed rows not finished, given back (due at once) when the bot is released. */
  readonly abandoned: ClaimedAccess[] = [];
  /** The client whose bucket waits this work listens to (a reconnection swaps it). */
  private watched: object | null = null;
  /** Calls the bot again when a limited guild has room. */
  private roomTimer: NodeJS.Timeout | undefined;
  private onRoom: () => void = () => undefined;

  constructor(readonly recorder: OutcomeRecorder) {}

  /** Calls that take a slot: out, and not known to be waiting for a bucket. */
  active(now: number): number {
    let n = 0;
    for (const call of this.calls.values()) if (call.waitingUntil <= now) n++;
    return n;
  }

  /** Calls that could start now: targets in the buffer with no call out, not blamed, in a guild with room. */
  ready(now: number): number {
    const busy = new Set([...this.calls.values()].map((c) => c.row.targetId));
    const targets = new Set<string>();
    for (const row of this.buffer) {
      if (busy.has(row.targetId) || this.faulted.has(row.targetId) || (this.limitedGuilds.get(guildOf(row)) ?? 0) > now) continue;
      targets.add(row.targetId);
    }
    return targets.size;
  }

  /** Buffered rows in guilds with room: what the claim-ahead budget counts (rows waiting for a bucket do not). */
  bufferedWithRoom(now: number): number {
    let n = 0;
    for (const row of this.buffer) if ((this.limitedGuilds.get(guildOf(row)) ?? 0) <= now) n++;
    return n;
  }

  /** Guilds whose bucket is empty now: a claim leaves their rows for later. */
  limitedNow(now: number): string[] {
    return [...this.limitedGuilds].filter(([, until]) => until > now).map(([guild]) => guild);
  }

  /** Claimed rows the worker has in hand (buffered or out): a claim must not return them again. */
  inHand(): ClaimedAccess[] {
    return [...this.buffer, ...[...this.calls.values()].map((c) => c.row)];
  }

  /**
   * Takes up to `room` rows to call now out of the buffer, in claim order: skipping targets with a
   * call out and guilds whose bucket is empty, and dropping rows of a blamed target.
   */
  take(room: number, now: number): ClaimedAccess[] {
    const busy = new Set([...this.calls.values()].map((c) => c.row.targetId));
    const taken: ClaimedAccess[] = [];
    const kept: ClaimedAccess[] = [];
    for (const row of this.buffer) {
      if (this.faulted.has(row.targetId)) continue;
      if (taken.length >= room || busy.has(row.targetId) || (this.limitedGuilds.get(guildOf(row)) ?? 0) > now) {
        kept.push(row);
        continue;
      }
      busy.add(row.targetId);
      taken.push(row);
    }
    this.buffer = kept;
    return taken;
  }

  /** The library is holding a request back (`rateLimited`); returns when its guild has room again, or null for the global limit. */
  rateLimited(data: BucketWait, now: number): number | null {
    if (data.global) return null;
    const until = now + Math.max(0, data.timeToReset);
    this.limitedGuilds.set(data.majorParameter, Math.max(until, this.limitedGuilds.get(data.majorParameter) ?? 0));
    for (const call of this.calls.values()) if (call.path !== null && data.url.endsWith(call.path)) call.waitingUntil = until;
    return until;
  }

  /** Forgets guilds whose window has passed; returns the earliest one still limited (epoch ms), or null. */
  nextRoomAt(now: number): number | null {
    let next: number | null = null;
    for (const [guild, until] of this.limitedGuilds) {
      if (until <= now) this.limitedGuilds.delete(guild);
      else next = next === null ? until : Math.min(next, until);
    }
    return next;
  }

  /**
   * Listens to `client`'s bucket waits (once per client, through `subscribe`, where the client
   * reports them): a call it holds back for a bucket frees its slot and its guild waits; `onRoom`
   * is called then, and again when a waiting guild has room.
   */
  watch(client: object, subscribe: ((listener: (wait: BucketWait) => void) => void) | undefined, onRoom: () => void): void {
    this.onRoom = onRoom;
    if (this.watched === client) return;
    this.watched = client;
    subscribe?.((wait) => {
      if (this.watched !== client || this.rateLimited(wait, Date.now()) === null) return;
      this.armRoomTimer();
      this.onRoom();
    });
  }

  /** The platform asked to wait (Telegram's 429 `retry_after`): no call in `guild` before `until` (epoch ms). */
  holdBack(guild: string, until: number): void {
    this.limitedGuilds.set(guild, Math.max(until, this.limitedGuilds.get(guild) ?? 0));
    this.armRoomTimer();
  }

  /** Stops the room timer (the bot is let go, or the worker stops). */
  close(): void {
    clearTimeout(this.roomTimer);
    this.watched = null;
  }

  private armRoomTimer(): void {
    clearTimeout(this.roomTimer);
    const next = this.nextRoomAt(Date.now());
    if (next === null) return;
    this.roomTimer = setTimeout(() => {
      this.onRoom();
      this.armRoomTimer();
    }, next - Date.now() + 1);
    this.roomTimer.unref();
  }

  /** After claim number `claim` ended: forgets the blamed targets whose failure it saw written. */
  claimEnded(claim: number): void {
    for (const [targetId, clearAfter] of this.faulted) if (clearAfter <= claim) this.faulted.delete(targetId);
  }
}
