import type { Logger } from 'pino';
import type { LiveEventsStore } from '../store/live-events.store.js';

/**
 * The projects this node has live-update connections of, kept in the database as live audiences
 * (`projects.live_until`, docs/live-updates.md "Who gets broadcast marks"): only their events get
 * the broadcast mark the broadcaster claims (drizzle/functions.sql, tenure_events_inserted), so a
 * project nobody listens to costs no mark, no claim and no vacuum of either on every write.
 *
 * A connection is admitted only once its project is a live audience (`join`): every event
 * committed from then on is marked. The projects held here are refreshed every `refreshMs`, each
 * time for `expiryMs`; one nobody refreshes (its last connection closed, or its node stopped)
 * lapses `expiryMs` after its last refresh. The expiry bounds the replay's late-commit reasoning
 * (src/store/live-events.store.ts), so it stays far above the refresh.
 */

export const AUDIENCE_REFRESH_MS = 60_000;
export const AUDIENCE_EXPIRY_MS = 10 * 60_000;

/** What the audiences need of the store: a project's hold written and refreshed. */
export type AudienceStore = Pick<LiveEventsStore, 'holdAudience' | 'refreshAudiences'>;

interface Audience {
  sockets: Set<string>;
  /** The project's hold: in flight, or done. Null after it failed, so the next connection retries. */
  held: Promise<void> | null;
}

export interface LiveAudiencesOptions {
  refreshMs?: number;
  expiryMs?: number;
}

export class LiveAudiences {
  private readonly audiences = new Map<string, Audience>();
  private readonly refreshMs: number;
  private readonly expiryMs: number;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: AudienceStore,
    private readonly logger: Logger,
    options: LiveAudiencesOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? AUDIENCE_REFRESH_MS;
    this.expiryMs = options.expiryMs ?? AUDIENCE_EXPIRY_MS;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.refreshing;
  }

  /** Counts the connection in its project's audience; resolves once the project is held. */
  async join(projectId: string, socketId: string): Promise<void> {
    let audience = this.audiences.get(projectId);
    if (!audience) this.audiences.set(projectId, (audience = { sockets: new Set(), held: null }));
    audience.sockets.add(socketId);
    const current = audience;
    current.held ??= this.hold(projectId).catch((err: unknown) => {
      current.held = null;
      throw err;
    });
    try {
      await current.held;
    } catch (err) {
      this.leave(projectId, socketId);
      throw err;
    }
  }

  /** The connection closed (idempotent). The project lapses on its own once nobody is left. */
  leave(projectId: string, socketId: string): void {
    const audience = this.audiences.get(projectId);
    if (!audience?.sockets.delete(socketId) || audience.sockets.size > 0) return;
    this.audiences.delete(projectId);
  }

  /** The projects this node holds (tests). */
  projects(): string[] {
    return [...this.audiences.keys()];
  }

  /** One refresh of the projects held here (the timer's work; tests call it). */
  refresh(): Promise<void> {
    const run = this.refreshing.then(() => this.refreshHeld());
    this.refreshing = run.catch(() => undefined);
    return run;
  }

  private async hold(projectId: string): Promise<void> {
    if (!(await this.store.holdAudience(projectId, this.expiryMs))) throw new Error(`project ${projectId} no longer exists`);
  }

  private async refreshHeld(): Promise<void> {
    try {
      const projects = this.projects();
      const refreshed = new Set(await this.store.refreshAudiences(projects, this.expiryMs));
      for (const projectId of projects) {
        if (refreshed.has(projectId) || !this.audiences.has(projectId)) continue;
        // Lapsed while held (this node stalled past the expiry, say): events written meanwhile
        // went unmarked. Held again under the project's lock, as for a first connection.
        this.logger.warn({ project_id: projectId }, 'live audience lapsed while connections were open; holding it again');
        await this.hold(projectId);
      }
    } catch (err) {
      this.logger.warn({ err }, 'could not refresh live audiences; trying again on the next refresh');
    }
  }
}
