import { SecretBoxError, type SecretBox } from '../integrations/secret-box.js';

/**
 * Webhook signing secrets at rest (docs/webhooks.md, "Decisions"). tenure must keep the secret
 * itself, not a hash, since every delivery is signed with it; so it is sealed with the instance's
 * encryption key, like bot tokens and Stripe keys (src/domain/integrations/secret-box.ts), and
 * opened by the worker for each attempt. The API shows it once, at creation and at rotation.
 *
 * Where the instance has no key (PostgreSQL without TENURE_ENCRYPTION_KEY) webhooks keep working
 * as before, their secrets stored as they are, and every delivery worker says so when it starts. A stored value is sealed
 * when it has the secret box's form (`v1.<key id>.…`); anything else is a secret stored before
 * sealing (or without a key), read as it is. So no row is ever unreadable while it waits to be
 * sealed: the start seals such rows (`sealStoredSecrets`), a batch per transaction, and a process
 * that dies in between leaves each row either as it was or sealed.
 */

/** How every value the secret box seals begins (its format's version, then its key id). */
export const SEALED_PREFIX = 'v1.';

export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX);

/** The key id a sealed value names (`v1.<key id>.…`). */
export const keyIdOf = (sealed: string): string => sealed.split('.')[1] ?? '';

const VARIABLE = 'TENURE_ENCRYPTION_KEY';

/** What a delivery worker on PostgreSQL without a key logs when it starts. */
export const UNSEALED_WARNING =
  `Webhook signing secrets are stored unsealed: this instance has no encryption key. Set ${VARIABLE} ` +
  '(32 bytes, base64 or hex, the same on every tenure process) and restart: the next start seals them; docs/webhooks.md, "Decisions"';

/** Something a delivery worker says when it starts, about the secrets it will open. */
export interface SecretsNote {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/** What the start's sealing did (`sealStoredSecrets`), and what this instance cannot open. */
export interface SealReport {
  sealed: number;
  /** Webhooks whose current secret is sealed with another key than this instance's (or it has none). */
  unreadable: { keyId: string; webhooks: number }[];
}

export class WebhookSecrets {
  private atStart: SealReport | null = null;

  constructor(private readonly box: SecretBox | null) {}

  /** True when secrets are sealed at rest (the instance has a key). */
  get sealing(): boolean {
    return this.box !== null;
  }

  /** The id of the key this instance seals with; null without a key. */
  get keyId(): string | null {
    return this.box?.keyId ?? null;
  }

  /** What the webhooks table keeps for a new `secret`: sealed when the instance has a key. */
  toStored(secret: string): string {
    return this.box ? this.box.seal(secret) : secret;
  }

  /**
   * The secret `stored` holds. Throws SecretBoxError when it is sealed and this instance cannot
   * open it (no key, another key, altered).
   */
  open(stored: string): string {
    if (!isSealed(stored)) return stored;
    if (!this.box) throw new SecretBoxError(`sealed with an encryption key (id ${keyIdOf(stored)}) and this instance has none: set ${VARIABLE}`);
    return this.box.open(stored);
  }

  /** Keeps what the start's sealing found, for `notes`. */
  noteStart(report: SealReport): void {
    this.atStart = report;
  }

  /**
   * What a delivery worker logs when it starts: secrets left unsealed for want of a key, what the
   * start sealed, what this instance cannot open. The worker says it, not the start itself: every
   * CLI command starts too, and its stdout carries its one JSON document.
   */
  notes(): SecretsNote[] {
    const notes: SecretsNote[] = [];
    if (!this.box) notes.push({ level: 'warn', fields: { variable: VARIABLE }, message: UNSEALED_WARNING });
    if (this.atStart && this.atStart.sealed > 0) {
      notes.push({ level: 'info', fields: { webhooks: this.atStart.sealed }, message: 'the start sealed the webhook signing secrets stored unsealed' });
    }
    for (const { keyId, webhooks } of this.atStart?.unreadable ?? []) {
      notes.push({
        level: 'error',
        fields: { variable: VARIABLE, key_id: keyId, webhooks, instance_key_id: this.keyId },
        message:
          `${webhooks} webhook signing secrets are sealed with an encryption key this instance does not have: their deliveries fail ` +
          `(error_class "signing") until ${VARIABLE} is that key on every process, or each secret is rotated`,
      });
    }
    return notes;
  }
}

/** The store's side of sealing what was stored before (WebhooksStore). */
export interface StoredSecrets {
  /**
   * Seals, in one transaction, up to `limit` webhooks whose secret or previous secret is not
   * sealed yet (locked while it runs); returns how many it changed.
   */
  sealUnsealed(seal: (secret: string) => string, limit: number): Promise<number>;
  /** Webhooks by the key their current secret is sealed with; `keyId` null: not sealed. */
  countByKey(): Promise<{ keyId: string | null; webhooks: number }[]>;
}

/** Webhooks sealed per transaction at start: a bounded lock, and a few milliseconds each. */
export const SEAL_BATCH = 500;

/**
 * Run at every start, after the migrations: seals what is stored unsealed (secrets from before
 * sealing, or written while the instance had no key), then counts what this instance cannot open;
 * the report is kept on `secrets` for the delivery worker to tell (`notes`). Idempotent, and safe
 * with several processes starting at once (each batch locks its rows; a row another process sealed
 * meanwhile no longer matches).
 */
export async function sealStoredSecrets(store: StoredSecrets, secrets: WebhookSecrets): Promise<SealReport> {
  let sealed = 0;
  if (secrets.sealing) {
    // A batch that finds nothing left is the last (one that lost rows to another process goes on).
    for (;;) {
      const n = await store.sealUnsealed((s) => secrets.toStored(s), SEAL_BATCH);
      if (n === 0) break;
      sealed += n;
    }
  }
  const unreadable = (await store.countByKey()).flatMap((k) => (k.keyId !== null && k.keyId !== secrets.keyId ? [{ keyId: k.keyId, webhooks: k.webhooks }] : []));
  const report = { sealed, unreadable };
  secrets.noteStart(report);
  return report;
}
