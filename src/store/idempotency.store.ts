import { sql } from 'drizzle-orm';
import { affectedOf, rowsOf, type Db } from '../database/db.js';

/**
 * Idempotency-Key records (docs/idempotency-and-lists.md). A record is `running` from the claim
 * until the first request's response is known, then `done` with that response. `expires_at` is
 * the lease of a running claim (a node that died mid-request frees the key when it passes) and
 * the 24-hour retention of a done one; past it the record counts as absent.
 */

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type IdempotencyRecord =
  | { state: 'running'; requestHash: string }
  | { state: 'done'; requestHash: string; response: StoredResponse };

export type Claim = { claimed: true } | { claimed: false; record: IdempotencyRecord };

export interface ClaimInput {
  projectId: string;
  key: string;
  requestHash: string;
  now: Date;
  /** When a claim whose request never finished may be taken over. */
  leaseUntil: Date;
}

interface Row {
  request_hash: string;
  state: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

export class IdempotencyStore {
  constructor(private readonly db: Db) {}

  /**
   * Claims the key for this request, or returns the record that holds it. The claim is one
   * INSERT … ON CONFLICT, so of concurrent duplicates exactly one wins on PGlite and PostgreSQL
   * alike; an expired record is taken over in the same statement (the row lock serialises
   * takeovers, and the WHERE is re-checked against the winner's fresh expiry).
   */
  async claim(input: ClaimInput): Promise<Claim> {
    // A record read as absent was released between the two statements: claim again. Two rounds
    // suffice unless the key is being released and re-claimed in a tight loop; give up after a few.
    for (let attempt = 0; attempt < 5; attempt++) {
      const claimed = await this.db.execute(sql`
        INSERT INTO idempotency_keys (project_id, key, request_hash, state, created_at, expires_at)
        VALUES (${input.projectId}, ${input.key}, ${input.requestHash}, 'running', ${input.now}, ${input.leaseUntil})
        ON CONFLICT (project_id, key) DO UPDATE SET
          request_hash = EXCLUDED.request_hash, state = 'running', response_status = NULL,
          response_headers = NULL, response_body = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE idempotency_keys.expires_at <= ${input.now}
        RETURNING 1`);
      if (rowsOf(claimed).length > 0) return { claimed: true };

      // A separate statement, so it sees the winner's committed row (a sibling SELECT in the
      // INSERT's statement would read the snapshot from before the winner committed).
      const [row] = rowsOf<Row>(
        await this.db.execute(sql`
          SELECT request_hash, state, response_status, response_headers, response_body
          FROM idempotency_keys
          WHERE project_id = ${input.projectId} AND key = ${input.key} AND expires_at > ${input.now}`),
      );
      if (row) return { claimed: false, record: toRecord(row) };
    }
    throw new Error('Idempotency key could not be claimed or read');
  }

  /** Stores the first response; from now on repeats get it until `expiresAt`. */
  async complete(input: { projectId: string; key: string; requestHash: string; response: StoredResponse; expiresAt: Date }): Promise<void> {
    const { response } = input;
    await this.db.execute(sql`
      UPDATE idempotency_keys SET state = 'done', response_status = ${response.status},
        response_headers = ${JSON.stringify(response.headers)}::jsonb, response_body = ${response.body},
        expires_at = ${input.expiresAt}
      WHERE project_id = ${input.projectId} AND key = ${input.key}
        AND request_hash = ${input.requestHash} AND state = 'running'`);
  }

  /** Frees a running claim (its request failed in a way the client should retry). */
  async release(input: { projectId: string; key: string; requestHash: string }): Promise<void> {
    await this.db.execute(sql`
      DELETE FROM idempotency_keys
      WHERE project_id = ${input.projectId} AND key = ${input.key}
        AND request_hash = ${input.requestHash} AND state = 'running'`);
  }

  /**
   * Deletes expired records (done ones past 24 h, abandoned claims past their lease). By the
   * database's clock, which every node shares: a node whose clock runs ahead must not delete
   * records the others still replay.
   */
  async prune(): Promise<number> {
    return affectedOf(await this.db.execute(sql`DELETE FROM idempotency_keys WHERE expires_at <= now()`));
  }
}

function toRecord(row: Row): IdempotencyRecord {
  if (row.state !== 'done') return { state: 'running', requestHash: row.request_hash };
  return {
    state: 'done',
    requestHash: row.request_hash,
    response: { status: row.response_status!, headers: row.response_headers ?? {}, body: row.response_body ?? '' },
  };
}
