import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { future, userId, type Harness, type Tenant } from './harness.js';

/** What the idempotency suites share: keyed requests, the replay assertion, and the table. */

export const newKey = (): string => `key-${randomUUID()}`;

/** A request that would succeed: a fresh member for POST /memberships. */
export const memberPayload = () => ({ user_id: userId(), end_date: future(30).iso });

export function post(t: Tenant, url: string, payload: unknown, key?: string): Promise<LightMyRequestResponse> {
  return t.request({
    method: 'POST',
    url,
    payload: payload as object,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

/** `replay` repeats `first` byte for byte (status, body, content type, request id) and says so. */
export function expectReplayOf(replay: LightMyRequestResponse, first: LightMyRequestResponse): void {
  expect(first.headers['idempotent-replayed'], first.body).toBeUndefined();
  expect(replay.headers['idempotent-replayed'], replay.body).toBe('true');
  expect(replay.statusCode, replay.body).toBe(first.statusCode);
  expect(replay.rawPayload.equals(first.rawPayload), replay.body).toBe(true);
  expect(replay.headers['content-type']).toBe(first.headers['content-type']);
  expect(replay.headers['x-request-id']).toBe(first.headers['x-request-id']);
}

/**
 * A replay of a response holding a secret shown once (webhook create, rotate-secret): the first
 * response without `data.secret`, which no idempotency record keeps.
 */
export function expectReplayWithoutSecret(replay: LightMyRequestResponse, first: LightMyRequestResponse): void {
  expect(replay.headers['idempotent-replayed'], replay.body).toBe('true');
  expect(replay.statusCode, replay.body).toBe(first.statusCode);
  expect(replay.headers['x-request-id']).toBe(first.headers['x-request-id']);
  const { secret, ...shown } = first.json().data as { secret: string };
  expect(secret).toMatch(/\S/);
  expect(replay.json()).toStrictEqual({ ...first.json(), data: shown });
}

/** A fresh execution: not a replay, a request id of its own. */
export function expectExecuted(res: LightMyRequestResponse, status: number, previous?: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['idempotent-replayed'], res.body).toBeUndefined();
  if (previous) expect(res.headers['x-request-id']).not.toBe(previous.headers['x-request-id']);
}

export interface KeyRow {
  key: string;
  state: string;
  response_status: number | null;
}

export async function keyRows(h: Harness, projectId: string): Promise<KeyRow[]> {
  return rowsOf<KeyRow>(
    await h.database.db.execute(
      sql`SELECT key, state, response_status FROM idempotency_keys WHERE project_id = ${projectId} ORDER BY key`,
    ),
  );
}

export async function count(h: Harness, table: 'memberships' | 'webhooks' | 'events' | 'plans' | 'targets', projectId: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await h.database.db.execute(sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)} WHERE project_id = ${projectId}`),
  );
  return row!.n;
}
