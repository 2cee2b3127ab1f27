import { sql, type SQL } from 'drizzle-orm';
import { EVENT_TYPES, type EventPayloads, type EventType } from '../domain/events.js';
import { markWrites } from '../database/wakeups.js';

/**
 * The outbox: the one way a store writes to `events`. Each helper returns an `INSERT INTO events`
 * fragment that the store places in the same statement as the change it announces (usually a CTE
 * beside the UPDATE it reports), so the change and its event commit together or not at all. The
 * trigger in drizzle/functions.sql then fans the event out to webhooks; the fragment is marked so
 * that, once the statement carrying it commits, the writer's process wakes the live broadcasters
 * and the delivery workers (src/database/wakeups.ts).
 *
 * The payload is keyed on the event catalogue (`EventPayloads`): every key of the event's data
 * must be given, no other key may be, and each value is an `SQL<T>` of the catalogue's type for
 * that key. A new event type, a renamed or added field, or a field whose type changes is a type
 * error where the event is written. (The SQL itself is not type-checked: an inline sql`…` takes
 * the catalogue's type from its place, a fragment made elsewhere states it, e.g. `sql<PlanView>`
 * in planJson; the store tests check that the SQL yields it.)
 */

/**
 * The expressions building each field of event `T`'s data, keyed exactly as the catalogue. `T`
 * may be a union (one statement writing one of several types) only of types whose payloads have
 * the same keys; otherwise no data fits.
 */
export type EventData<T extends EventType> = false extends EveryHas<T, AnyKey<T>>
  ? never
  : { readonly [K in keyof EventPayloads[T]]-?: SQL<EventPayloads[T][K]> };
type AnyKey<T extends EventType> = T extends EventType ? keyof EventPayloads[T] : never;
type EveryHas<T extends EventType, K> = T extends EventType ? ([K] extends [keyof EventPayloads[T]] ? true : false) : never;

export interface EventSource<T extends EventType> {
  /**
   * The event's id (a column of `from`); without it, the column's default (a random UUID). Writers
   * of many events at once give time-ordered ids (UUIDv7): each lands at the right edge of the
   * primary key instead of on a random page of it.
   */
  id?: SQL;
  /** The project the event belongs to (a column of `from`, or a parameter). */
  projectId: SQL;
  data: EventData<T>;
  /**
   * The rest of the SELECT: `FROM changed WHERE … ORDER BY …`, one event per row. Without it, one
   * event from parameters (`VALUES`).
   */
  from?: SQL;
  /** Shown to live updates only, never fanned out to webhooks (a delivery's own outcome). */
  liveOnly?: boolean;
  /** Deliver to this one webhook of the project instead of all of them (`webhook.test`). */
  targetWebhookId?: SQL;
}

declare const typed: unique symbol;

/** One `SELECT` of events of one type, for `insertEvents`. Built only by `eventRows`. */
export interface EventRows {
  readonly [typed]: true;
  readonly type: EventType;
  readonly source: EventSource<EventType>;
}

/** `INSERT INTO events …` writing event(s) of one type. Append `RETURNING id` for their ids. */
export function insertEvent<T extends EventType>(type: T, source: EventSource<NoInfer<T>>): SQL {
  return insertEvents([eventRows(type, source)]);
}

/** Events of one type, to be written with others in one INSERT by `insertEvents`. */
export function eventRows<T extends EventType>(type: T, source: EventSource<NoInfer<T>>): EventRows {
  return { type, source: source as unknown as EventSource<EventType> } as EventRows;
}

/**
 * One `INSERT INTO events` of several kinds of event, their SELECTs joined by UNION ALL (in that
 * order): one statement, so the triggers see them as one batch, as one INSERT has always been.
 */
export function insertEvents(rows: readonly [EventRows, ...EventRows[]]): SQL {
  const liveOnly = rows.some((r) => r.source.liveOnly !== undefined);
  const targeted = rows.some((r) => r.source.targetWebhookId !== undefined);
  const identified = rows.some((r) => r.source.id !== undefined);
  const columns = [...(identified ? ['id'] : []), 'project_id', 'type', 'data', ...(liveOnly ? ['live_only'] : []), ...(targeted ? ['target_webhook_id'] : [])];
  const selects = rows.map(({ type, source }) => {
    const values = [
      ...(identified ? [source.id ?? sql`gen_random_uuid()`] : []),
      source.projectId,
      sql.raw(literal(type, EVENT_TYPES.includes(type))),
      buildObject(source.data as Record<string, SQL>),
      ...(liveOnly ? [sql.raw(source.liveOnly ? 'true' : 'false')] : []),
      ...(targeted ? [source.targetWebhookId ?? sql`NULL::uuid`] : []),
    ];
    const list = sql.join(values, sql`, `);
    if (source.from) return sql`SELECT ${list} ${source.from}`;
    if (rows.length > 1) return sql`SELECT ${list}`;
    return sql`VALUES (${list})`;
  });
  const body = selects.length === 1 ? selects[0]! : sql.join(selects.map((s) => sql`(${s})`), sql` UNION ALL `);
  // Events wake the broadcasters, and the deliveries their fan-out made wake the workers.
  return markWrites(sql`INSERT INTO events (${sql.raw(columns.join(', '))}) ${body}`, ['events', 'deliveries']);
}

/** `jsonb_build_object('key', value, …)`; the order of keys does not matter (jsonb sorts them). */
function buildObject(data: Record<string, SQL>): SQL {
  const pairs = Object.entries(data).map(([key, value]) => sql`${sql.raw(literal(key, /^[a-z_]+$/.test(key)))}, ${value}`);
  return sql`jsonb_build_object(${sql.join(pairs, sql`, `)})`;
}

/** A name from the catalogue as an SQL string literal; anything else is a programming error. */
function literal(name: string, known: boolean): string {
  if (!known) throw new Error(`not an event type or payload key of the catalogue: ${JSON.stringify(name)}`);
  return `'${name}'`;
}

/**
 * Event `e` (an alias of `events`) as webhooks carry it (docs/webhooks.md, "Events") and live
 * updates send it, rendered by drizzle/functions.sql's `tenure_webhook_body`. Rendered when read
 * (a delivery claimed, an event broadcast or replayed), not stored: an event is never changed, so
 * every attempt and every replay of it sends the same bytes.
 */
export const webhookBody = (e: string): SQL => sql.raw(`tenure_webhook_body(${e}.id, ${e}.type, ${e}.project_id, ${e}.emitted_at, ${e}.data)`);
