import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../../../domain/projects/auth.service.js';
import { REVOCATIONS_CHANNEL } from '../../../store/api-keys.store.js';
import type { Database } from '../../../store/db.js';
import { listenChannel, type Notifier } from '../../../webhooks/notifier.js';

/**
 * Makes a revocation on any node stop the key on this one at once: LISTEN for the ids the
 * revoking transaction announces and drop them from this app's auth cache. After a
 * (re)connection notifications may have been missed, so the whole cache is dropped.
 */
export function registerRevocationListener(app: FastifyInstance, deps: { database: Database; auth: AuthService }): void {
  let notifier: Notifier | null = null;
  app.addHook('onReady', async () => {
    const { database, auth } = deps;
    notifier = await listenChannel(
      database,
      database.url,
      REVOCATIONS_CHANNEL,
      (keyId) => (keyId === null ? auth.invalidate() : auth.invalidateKeyId(keyId)),
      app.log,
    );
  });
  app.addHook('onClose', async () => {
    await notifier?.close();
  });
}
