import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Time-ordered ids (UUIDv7, RFC 9562) for rows written many at a time (the CSV import): each new
 * id sorts after the ids of earlier milliseconds, so a chunk's rows land at the right edge of their
 * table's primary key instead of on a random page of it. At a million memberships that took the
 * import from ~27,000 to ~44,000 rows/s (bench/import.ts side by side; docs/configuration.md,
 * "Importing memberships"): random keys touched a page of each growing index per row, and after
 * each checkpoint wrote each such page whole to the WAL.
 *
 * Single writes keep the columns' random default (`gen_random_uuid()`): ten connections inserting
 * at once into the same right-edge page wait on each other, measured slower than random pages.
 * Like any UUIDv7, the id shows when its row was written (to the millisecond), which the row's own
 * `created_at` shows anyway.
 *
 * The random bits come from a pool refilled 1,024 ids at a time: the library's default asks the
 * operating system for 16 bytes per id, which made an id cost ~1.5 µs (pooled: 0.2-0.4 µs).
 */

const POOL_IDS = 1_024;
const pool = new Uint8Array(16 * POOL_IDS);
let used = POOL_IDS;

function pooledRandom(): Uint8Array {
  if (used === POOL_IDS) {
    randomFillSync(pool);
    used = 0;
  }
  return pool.subarray(16 * used, 16 * ++used);
}

/** A new UUIDv7. */
export const orderedId = (): string => v7({ rng: pooledRandom });
