import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { MembershipView } from '../../src/domain/memberships/membership.view.js';
import { rowsOf } from '../../src/database/db.js';
import { future, userId, type Harness, type Tenant } from './harness.js';

/**
 * What the HTTP suites share: strict envelope assertions, seeding through the API, and direct
 * looks at the tables (to prove a change happened — or did not — without trusting the API).
 */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const END_DATES_SET = 'Membership end dates set successfully';

/** The two entries of the format 422 (docs/errors.md), number option first. */
export function instantFormatErrors(field: string) {
  return [
    { message: `${field} as a number must be a Unix timestamp in milliseconds with exactly 13 digits`, error_code: 'VALIDATION_ERROR' },
    {
      message: `${field} as a string must be a UTC ISO-8601 datetime with exactly three millisecond digits (YYYY-MM-DDTHH:MM:SS.mmmZ)`,
      error_code: 'VALIDATION_ERROR',
    },
  ];
}

type Response = LightMyRequestResponse;

/** The request id: a UUID, in the `x-request-id` header and the body alike. */
function requestIdOf(res: Response): string {
  const header = res.headers['x-request-id'];
  expect(header, res.body).toMatch(UUID);
  return header as string;
}

function expectJson(res: Response): Record<string, unknown> {
  expect(res.headers['content-type'], res.body).toBe('application/json; charset=utf-8');
  return res.json();
}

/** A success envelope, every field checked and no other field present. */
export function expectSuccess(
  res: Response,
  want: { status?: number; method: string; path: string; message: string; data: unknown; total?: number },
): void {
  const status = want.status ?? 200;
  expect(res.statusCode, res.body).toBe(status);
  expect(expectJson(res), res.body).toStrictEqual({
    ok: true,
    request_id: requestIdOf(res),
    method: want.method,
    path: want.path,
    code: status,
    ...(want.total === undefined ? {} : { total: want.total }),
    message: want.message,
    data: want.data,
  });
}

/** The error-object envelope `{ok: false, …, error: {error_code, message}}`. */
export function expectError(
  res: Response,
  want: { status: number; code: string; method: string; path: string; message?: unknown },
): void {
  expect(res.statusCode, res.body).toBe(want.status);
  expect(expectJson(res), res.body).toStrictEqual({
    ok: false,
    request_id: requestIdOf(res),
    method: want.method,
    path: want.path,
    code: want.status,
    error: { error_code: want.code, message: want.message ?? expect.stringMatching(/\S/) },
  });
}

/**
 * A 422 whose message (the envelope's one `error`, or its `errors` joined) is `message`, or
 * matches it when it is a pattern.
 */
export function expectRefusal(res: Response, message: string | RegExp): void {
  expect(res.statusCode, res.body).toBe(422);
  const body = expectJson(res) as { error?: { message: string }; errors?: { message: string }[] };
  const text = body.error?.message ?? body.errors?.map((e) => e.message).join(' ');
  if (typeof message === 'string') expect(text).toBe(message);
  else expect(text).toMatch(message);
}

/** The two-entry 422 for a malformed instant field. */
export function expectInstantFormatError(res: Response, want: { method: string; path: string; field?: string }): void {
  expect(res.statusCode, res.body).toBe(422);
  expect(expectJson(res), res.body).toStrictEqual({
    ok: false,
    request_id: requestIdOf(res),
    method: want.method,
    path: want.path,
    code: 422,
    errors: instantFormatErrors(want.field ?? 'extend'),
  });
}

/** The error-object 422 for a well-formed instant that is not in the future. */
export function expectNotFutureError(res: Response, want: { method: string; path: string; field?: string }): void {
  expectError(res, {
    status: 422,
    code: 'VALIDATION_ERROR',
    method: want.method,
    path: want.path,
    message: `${want.field ?? 'extend'} must be a future timestamp`,
  });
  expect(res.json().error.message, res.body).toContain('future');
}

// ── Seeding through the API ─────────────────────────────────────────────────────────────────

export async function createMembership(
  t: Tenant,
  input: { userId?: string; endDate?: string | number; planId?: string } = {},
): Promise<MembershipView> {
  const payload = { user_id: input.userId ?? userId(), end_date: input.endDate ?? future(10).iso, ...(input.planId ? { plan_id: input.planId } : {}) };
  const res = await t.request({ method: 'POST', url: `${t.base}/memberships`, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export async function createWebhook(t: Tenant, url = 'https://hooks.example.com/tenure'): Promise<{ id: string; url: string; secret: string }> {
  const res = await t.request({ method: 'POST', url: `${t.base}/integrations/webhooks`, payload: { url } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

// ── Direct looks at the tables ──────────────────────────────────────────────────────────────

const isoCol = (column: string) => sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

export interface MembershipRow {
  id: string;
  user_id: string;
  end_date: string;
  status: string;
}

export async function membershipRows(h: Harness, projectId: string): Promise<MembershipRow[]> {
  return rowsOf<MembershipRow>(
    await h.database.db.execute(sql`
      SELECT id, user_id, ${isoCol('end_date')} AS end_date, status
      FROM memberships WHERE project_id = ${projectId} ORDER BY user_id, id`),
  );
}

export async function membershipRow(h: Harness, projectId: string, user: string): Promise<MembershipRow | undefined> {
  return (await membershipRows(h, projectId)).find((m) => m.user_id === user);
}

export interface EventRow {
  type: string;
  project_id: string;
  data: Record<string, unknown>;
}

/** The project's outbox rows, oldest first. */
export async function eventRows(h: Harness, projectId: string): Promise<EventRow[]> {
  return rowsOf<EventRow>(
    await h.database.db.execute(sql`SELECT type, project_id, data FROM events WHERE project_id = ${projectId} ORDER BY seq`),
  );
}

/** The project's webhooks as stored, each secret opened (it is sealed at rest) to compare with what the API showed. */
export async function webhookRows(h: Harness, projectId: string): Promise<{ id: string; url: string; secret: string; enabled: boolean }[]> {
  const rows = rowsOf<{ id: string; url: string; secret: string; enabled: boolean }>(
    await h.database.db.execute(sql`SELECT id, url, secret, enabled FROM webhooks WHERE project_id = ${projectId} ORDER BY id`),
  );
  return rows.map((r) => ({ ...r, secret: h.container.webhookSecrets.open(r.secret) }));
}

/**
 * Every table a project's requests can write, each as one jsonb array of its rows (every column, in
 * a stable order): what projectState compares and projectFingerprint hashes.
 */
function projectTables(projectId: string) {
  const all = (table: string, order: string) => sql.raw(`coalesce(jsonb_agg(to_jsonb(r) ORDER BY ${order}), '[]') FROM ${table} r`);
  /** A table with a project_id column: the project's rows. */
  const own = (table: string, order: string) => sql`SELECT ${all(table, order)} WHERE r.project_id = ${projectId}`;
  return {
    memberships: own('memberships', 'r.id'),
    webhooks: own('webhooks', 'r.id'),
    events: own('events', 'r.seq'),
    // Plans, targets and their links.
    plans: own('plans', 'r.id'),
    targets: own('targets', 'r.id'),
    plan_targets: sql`SELECT ${all('plan_targets', 'r.plan_id, r.target_id')} JOIN plans p ON p.id = r.plan_id WHERE p.project_id = ${projectId}`,
    // API keys, settings, users and bans.
    api_keys: own('api_keys', 'r.id'),
    settings: own('settings', 'r.key'),
    users: own('users', 'r.user_id'),
    bans: own('bans', 'r.user_id'),
    // Bot connections (sealed tokens included) and access rows.
    integrations: own('integrations', 'r.platform'),
    access: own('access', 'r.target_id, r.user_id'),
    // Merchant accounts (sealed secrets included), payments, the provider events applied, reversals
    // held for payments to come, and coupons with their uses.
    merchant_accounts: own('merchant_accounts', 'r.id'),
    payments: own('payments', 'r.id'),
    payment_events: sql`SELECT ${all('payment_events', 'r.event_id')} JOIN merchant_accounts m ON m.id = r.merchant_account_id WHERE m.project_id = ${projectId}`,
    held_reversals: own('held_reversals', 'r.payment_intent_id'),
    coupons: own('coupons', 'r.id'),
    coupon_redemptions: own('coupon_redemptions', 'r.id'),
    coupon_stripe_coupons: sql`SELECT ${all('coupon_stripe_coupons', 'r.coupon_id, r.merchant_account_id')} JOIN coupons c ON c.id = r.coupon_id WHERE c.project_id = ${projectId}`,
    // Trials taken or reserved, and buyers' confirmations of the project's policies (docs/payments.md).
    trials: own('trials', 'r.user_id'),
    policy_confirmations: own('policy_confirmations', 'r.id'),
    // The front desk's links.
    pay_links: own('pay_links', 'r.id_hash'),
    portal_links: own('portal_links', 'r.token_hash'),
    // Members' invoicing details (docs/portal.md).
    member_invoicing: own('member_invoicing', 'r.user_id'),
    // The Stripe customer tenure made for a member, per merchant account (docs/portal.md, "One customer per member").
    member_stripe_customers: own('member_stripe_customers', 'r.user_id, r.merchant_account_id'),
  };
}

type ProjectTable = keyof ReturnType<typeof projectTables>;

/** The tables of `names`, read in one statement as one row: table name → its rows. */
async function readTables<T extends ProjectTable>(h: Harness, projectId: string, names: readonly T[]): Promise<Record<T, unknown[]>> {
  const tables = projectTables(projectId);
  const columns = sql.join(
    names.map((name) => sql`(${tables[name]}) AS ${sql.identifier(name)}`),
    sql`, `,
  );
  return rowsOf<Record<T, unknown[]>>(await h.database.db.execute(sql`SELECT ${columns}`))[0]!;
}

/** Everything a request could change in a project: compare before and after to prove "nothing". */
export async function projectState(h: Harness, projectId: string) {
  const [memberships, webhooks, events, updated, catalogue, people, access, payments, links] = await Promise.all([
    membershipRows(h, projectId),
    webhookRows(h, projectId),
    h.database.db.execute(sql`SELECT id, seq, type, data FROM events WHERE project_id = ${projectId} ORDER BY seq`),
    h.database.db.execute(sql`SELECT id, ${isoCol('updated_at')} AS updated_at FROM memberships WHERE project_id = ${projectId} ORDER BY id`),
    readTables(h, projectId, ['plans', 'targets', 'plan_targets']),
    readTables(h, projectId, ['api_keys', 'settings', 'users', 'bans']),
    readTables(h, projectId, ['integrations', 'access']),
    readTables(h, projectId, ['merchant_accounts', 'payments', 'payment_events', 'held_reversals', 'coupons', 'coupon_redemptions', 'coupon_stripe_coupons', 'trials', 'policy_confirmations']),
    readTables(h, projectId, ['pay_links', 'portal_links', 'member_invoicing', 'member_stripe_customers']),
  ]);
  return { memberships, webhooks, events: rowsOf(events), updated: rowsOf(updated), catalogue, people, access, payments, links };
}

/**
 * A hash of every row of every table in projectTables, every column, in one statement: equal
 * before and after a request when it changed nothing (cheaper than projectState for suites that
 * check thousands of requests; on a difference, compare projectState for a readable diff).
 */
export async function projectFingerprint(h: Harness, projectId: string): Promise<string> {
  const tables = Object.values(projectTables(projectId));
  const parts = sql.join(
    tables.map((table) => sql`(${table})`),
    sql`, `,
  );
  return rowsOf<{ md5: string }>(await h.database.db.execute(sql`SELECT md5(jsonb_build_array(${parts})::text)`))[0]!.md5;
}

/** Marks a membership expired with an end date a day in the past, as the expiry sweeper would. */
export async function expireMembership(h: Harness, membershipId: string): Promise<string> {
  const [row] = rowsOf<{ end_date: string }>(
    await h.database.db.execute(sql`
      UPDATE memberships SET status = 'expired', end_date = now() - interval '1 day'
      WHERE id = ${membershipId} RETURNING ${isoCol('end_date')} AS end_date`),
  );
  return row!.end_date;
}

/** Inserts a plan directly (there is no plans API yet) and returns its id. */
export async function insertPlan(h: Harness, projectId: string, name = 'Gold', duration = '1 month'): Promise<string> {
  const [row] = rowsOf<{ id: string }>(
    await h.database.db.execute(sql`
      INSERT INTO plans (project_id, name, price, currency, duration, price_formatted)
      VALUES (${projectId}, ${name}, '10.00', 'USD', ${duration}, '$10.00') RETURNING id`),
  );
  return row!.id;
}

/**
 * Makes every outbox insert of one project fail inside the database (a trigger raising an
 * exception whose text must never reach a client). Scoped to the project so that test files
 * sharing one PostgreSQL database are not affected. Returns the function that removes it.
 */
export async function failEventInserts(h: Harness, projectId: string): Promise<() => Promise<void>> {
  expect(projectId).toMatch(UUID); // it is spliced into DDL below
  const name = `tenure_test_fail_${randomBytes(6).toString('hex')}`;
  await h.database.db.execute(
    sql.raw(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected failure: internal secret % in relation events', NEW.project_id; END $$`),
  );
  await h.database.db.execute(
    sql.raw(`CREATE TRIGGER ${name} BEFORE INSERT ON events FOR EACH ROW
      WHEN (NEW.project_id = '${projectId}'::uuid) EXECUTE FUNCTION ${name}()`),
  );
  return async () => {
    await h.database.db.execute(sql.raw(`DROP TRIGGER ${name} ON events`));
    await h.database.db.execute(sql.raw(`DROP FUNCTION ${name}()`));
  };
}

/** What a 500 body must never carry. */
export const INTERNALS = /injected|secret|relation|events|trigger|stack|sql|select|insert|update|at .*\.(ts|js)/i;

/**
 * Values that are neither a 13-digit millisecond number nor a `YYYY-MM-DDTHH:MM:SS.mmmZ` instant:
 * every endpoint taking an instant answers each with the two-entry 422 (docs/errors.md).
 */
export const MALFORMED_INSTANTS: [string, unknown][] = [
  ['12 digits', 999_999_999_999],
  ['14 digits', 10_000_000_000_000],
  ['a fraction', 1_767_225_600_000.5],
  ['a negative number', -1_767_225_600_000],
  ['zero', 0],
  ['a huge number (1e21)', 1e21],
  ['a numeric string', '1767225600000'],
  ['a +00:00 offset', '2099-01-01T00:00:00.000+00:00'],
  ['no Z', '2099-01-01T00:00:00.000'],
  ['no fraction', '2099-01-01T00:00:00Z'],
  ['1 fraction digit', '2099-01-01T00:00:00.1Z'],
  ['2 fraction digits', '2099-01-01T00:00:00.12Z'],
  ['4 fraction digits', '2099-01-01T00:00:00.1234Z'],
  ['a lowercase z', '2099-01-01T00:00:00.000z'],
  ['a lowercase t', '2099-01-01t00:00:00.000Z'],
  ['Feb 30', '2099-02-30T00:00:00.000Z'],
  ['Feb 29 of a non-leap year', '2027-02-29T00:00:00.000Z'],
  ['Apr 31', '2099-04-31T00:00:00.000Z'],
  ['month 13', '2099-13-01T00:00:00.000Z'],
  ['hour 24', '2099-01-01T24:00:00.000Z'],
  ['minute 60', '2099-01-01T00:60:00.000Z'],
  ['second 60', '2099-01-01T00:00:60.000Z'],
  ['whitespace padding', ' 2099-01-01T00:00:00.000Z '],
  ['the empty string', ''],
  ['null', null],
  ['true', true],
  ['an array', [future().ms]],
  ['an object', { at: future().iso }],
  ['Number.MAX_SAFE_INTEGER + 2', Number.MAX_SAFE_INTEGER + 2],
  ['a +01:00 offset', '2099-01-01T00:00:00.000+01:00'],
  ['a date only', '2099-01-01'],
  ['false', false],
];

/**
 * Runs `check` for each labelled case in turn, and a failure names its case. For variants of one
 * behaviour that share their set-up (a tenant, a prepared request), so a variant costs a request.
 */
export async function forEachCase<T>(cases: readonly (readonly [string, T])[], check: (value: T) => Promise<void>): Promise<void> {
  for (const [label, value] of cases) {
    try {
      await check(value);
    } catch (error) {
      if (error instanceof Error) error.message = `${label}: ${error.message}`;
      throw error;
    }
  }
}
