import type { Notifications } from '../../database/notifications.js';
import { REVOCATIONS_CHANNEL } from '../../store/api-keys.store.js';
import type { AuthService } from './auth.service.js';

/**
 * Makes a key revoked on any node stop working on this one at once, not when its auth-cache entry
 * expires. The revoking transaction announces the key's id (ApiKeysStore); this process LISTENs
 * once, drops the key from its one auth cache, and tells its own subscribers (the live gateway
 * closes that key's connections). After a (re)connection announcements may have been missed, so
 * the whole cache is dropped and subscribers get `null`: "check every key".
 */
export class KeyRevocations {
  private readonly subscribers = new Set<(keyId: string | null) => void>();
  private started: Promise<() => void> | null = null;

  constructor(
    private readonly notifications: Pick<Notifications, 'subscribe'>,
    private readonly auth: AuthService,
  ) {}

  /** Starts listening; calling it again is harmless. */
  async start(): Promise<void> {
    await (this.started ??= this.notifications.subscribe(REVOCATIONS_CHANNEL, (keyId) => {
      if (keyId === null) this.auth.invalidate();
      else this.auth.invalidateKeyId(keyId);
      for (const subscriber of this.subscribers) subscriber(keyId);
    }));
  }

  /** Stops listening (the subscribers stay, and hear nothing more). */
  async stop(): Promise<void> {
    const started = this.started;
    this.started = null;
    (await started?.catch(() => null))?.();
  }

  /** `onRevoked(keyId)` after this node's cache forgot the key; `null` means any key may be revoked. */
  subscribe(onRevoked: (keyId: string | null) => void): () => void {
    this.subscribers.add(onRevoked);
    return () => this.subscribers.delete(onRevoked);
  }
}
