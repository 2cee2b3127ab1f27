import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { MembershipView } from '../domain/memberships/membership.view.js';
import { eventRows, insertEvent, insertEvents, type EventData } from './outbox.js';

// The type-level half of these tests is checked by `tsc` (each @ts-expect-error must be an
// error, or the build fails); the runtime half checks the SQL the helpers emit.

const dialect = new PgDialect();
const render = (fragment: ReturnType<typeof insertEvent>) => {
  const { sql: text, params } = dialect.sqlToQuery(fragment);
  return { text: text.replace(/\s+/g, ' ').trim(), params };
};
const membership = sql<MembershipView>`m.json`;

describe('the outbox payload types', () => {
  it('require exactly the catalogue keys, each of the catalogue type', () => {
    expectTypeOf<EventData<'membership.bulk-extended'>>().toEqualTypeOf<{
      readonly total: ReturnType<typeof sql<number>>;
      readonly new_end_date: ReturnType<typeof sql<string>>;
    }>();
  });

  // Never called: compiling it is the test (the unused-directive check makes each line count).
  it('reject a write that does not match the catalogue, at compile time', () => {
    expectTypeOf(wrongWrites).toBeFunction();
  });
});

function wrongWrites() {
  const from = sql`FROM full_row`;
  const projectId = sql`project_id`;

  insertEvent('membership.created', { projectId, data: { membership }, from });
  // @ts-expect-error an event type that is not in the catalogue
  insertEvent('membership.renewed', { projectId, data: { membership }, from });
  // @ts-expect-error a key the payload does not have
  insertEvent('membership.created', { projectId, data: { membership, reason: sql<string>`'x'` }, from });
  // @ts-expect-error a key of the payload left out
  insertEvent('membership.extended', { projectId, data: { membership }, from });
  // @ts-expect-error a misspelt key
  insertEvent('membership.extended', { projectId, data: { membership, previous_end: sql<string>`x` }, from });
  // @ts-expect-error a value of another type than the catalogue's (number for string)
  insertEvent('membership.bulk-extended', { projectId, data: { total: sql<number>`1`, new_end_date: sql<number>`2` } });
  // An inline sql`…` takes its type from its place; a fragment made elsewhere must state it.
  insertEvent('membership.bulk-extended', { projectId, data: { total: sql`1`, new_end_date: sql`2` } });
  const untyped: SQL = sql`1`;
  // @ts-expect-error a fragment whose type is not stated
  insertEvent('membership.bulk-extended', { projectId, data: { total: untyped, new_end_date: sql`2` } });
  const [webhookId, at] = [sql<string>`h.id`, sql<string>`h.at`];
  insertEvent('webhook.endpoint-disabled', { projectId, data: { webhook_id: webhookId, reason: sql<'failing'>`'failing'`, disabled_at: at } });
  // @ts-expect-error a wider type (string) than the catalogue's ('failing')
  insertEvent('webhook.endpoint-disabled', { projectId, data: { webhook_id: webhookId, reason: sql<string>`r`, disabled_at: at } });

  // Several types in one call only when their payloads have the same keys.
  const either = 'membership.created' as 'membership.created' | 'membership.deleted';
  insertEvent(either, { projectId, data: { membership }, from });
  const mixed = 'membership.created' as 'membership.created' | 'membership.extended';
  // @ts-expect-error membership.extended also needs previous_end_date, membership.created must not have it
  insertEvent(mixed, { projectId, data: { membership, previous_end_date: sql<string>`x` }, from });

  // @ts-expect-error the rows of insertEvents come from eventRows, which checks them
  insertEvents([{ type: 'membership.created', source: { projectId, data: { membership } as never } }]);
}

describe('insertEvent', () => {
  it('writes one event per row of `from` in an INSERT … SELECT', () => {
    const q = render(
      insertEvent('membership.extended', {
        projectId: sql`project_id`,
        data: { membership, previous_end_date: sql<string>`full_row.previous_end_date` },
        from: sql`FROM full_row ORDER BY ord`,
      }),
    );
    expect(q.text).toBe(
      "INSERT INTO events (project_id, type, data) SELECT project_id, 'membership.extended', " +
        "jsonb_build_object('membership', m.json, 'previous_end_date', full_row.previous_end_date) FROM full_row ORDER BY ord",
    );
    expect(q.params).toEqual([]);
  });

  it('writes one event from parameters with VALUES', () => {
    const q = render(
      insertEvent('membership.bulk-extended', {
        projectId: sql`${'p-1'}`,
        data: { total: sql<number>`${3}::int`, new_end_date: sql<string>`${'2030-01-01'}::text` },
      }),
    );
    expect(q.text).toBe(
      "INSERT INTO events (project_id, type, data) VALUES ($1, 'membership.bulk-extended', " +
        "jsonb_build_object('total', $2::int, 'new_end_date', $3::text))",
    );
    expect(q.params).toEqual(['p-1', 3, '2030-01-01']);
  });

  it('sets the target webhook and live-only columns only when asked', () => {
    const q = render(
      insertEvent('webhook.test', {
        projectId: sql`w.project_id`,
        data: { message: sql<string>`${'hi'}::text`, webhook_id: sql<string>`w.id` },
        targetWebhookId: sql`w.id`,
        from: sql`FROM webhooks w`,
      }),
    );
    expect(q.text).toBe(
      "INSERT INTO events (project_id, type, data, target_webhook_id) SELECT w.project_id, 'webhook.test', " +
        "jsonb_build_object('message', $1::text, 'webhook_id', w.id), w.id FROM webhooks w",
    );
  });

  it('refuses a type or key outside the catalogue that got past the types', () => {
    const projectId = sql`p`;
    expect(() => insertEvent('x' as 'webhook.test', { projectId, data: { message: sql<string>`m`, webhook_id: sql<string>`w` } })).toThrow(
      /not an event type or payload key/,
    );
    const data = { membership, "x'); DROP TABLE events; --": membership } as unknown as EventData<'membership.created'>;
    expect(() => insertEvent('membership.created', { projectId, data })).toThrow(/not an event type or payload key/);
  });
});

describe('insertEvents', () => {
  it('joins the SELECTs of several types in one INSERT, filling the columns one of them leaves out', () => {
    const q = render(
      insertEvents([
        eventRows('plan.updated', { projectId: sql`a.project_id`, data: { plan: sql`a.plan` as never }, from: sql`FROM a ORDER BY a.ord` }),
        eventRows('webhook.endpoint-disabled', {
          projectId: sql`h.project_id`,
          data: { webhook_id: sql<string>`h.id`, reason: sql<'failing'>`'failing'`, disabled_at: sql<string>`h.at` },
          liveOnly: true,
          from: sql`FROM h`,
        }),
      ]),
    );
    expect(q.text).toBe(
      'INSERT INTO events (project_id, type, data, live_only) ' +
        "(SELECT a.project_id, 'plan.updated', jsonb_build_object('plan', a.plan), false FROM a ORDER BY a.ord) UNION ALL " +
        "(SELECT h.project_id, 'webhook.endpoint-disabled', jsonb_build_object('webhook_id', h.id, 'reason', 'failing', 'disabled_at', h.at), true FROM h)",
    );
  });
});
