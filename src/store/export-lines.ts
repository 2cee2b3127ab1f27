import { sql, type SQL } from 'drizzle-orm';
import { iso } from '../database/sql.js';
import type { ExportFormat } from '../domain/exports/export-format.js';
import { membershipWhere, SORTS } from './membership-queries.js';
import type { MembershipExportFilter } from './exports.store.js';
import { DIGITS_SQL, paymentWhere, type PaymentFilter } from './payments.store.js';
import { activeAt } from './rule-twins.js';

/**
 * The exports' rows as PostgreSQL writes them with `COPY (SELECT …) TO STDOUT` (docs/memberships.md,
 * "Export"): the database makes every line, so the server only passes bytes on.
 *
 * - CSV: COPY's CSV format quotes a field holding a comma, a quote or a line break and doubles its
 *   quotes, as RFC 4180 and the batch path's csvField do; an empty string is written as null would
 *   be (NULLIF), since the batch path writes both as an empty field; booleans as `true`/`false`.
 *   COPY ends records with LF only: crlfRecords (exports.store.ts) turns record ends into CRLF.
 * - NDJSON: one JSON text per row, as the list's serializer writes it (no spaces, its fields in its
 *   order; the optional trial fields only when the membership has a trial, as the serializer leaves
 *   them out): a membership's by concatenation (membershipJsonLine), a payment's with row_to_json
 *   of a lateral row. It is written as CSV with a quote and a delimiter that
 *   JSON text never holds raw (\x01, \x02: JSON escapes every control character, line breaks
 *   included), so COPY neither quotes nor escapes anything in it: the line is the JSON text as is.
 *   (COPY's text format would double every backslash of the JSON's escapes.)
 */

const text = (e: SQL) => sql`NULLIF(${e}, '')`;

/** The CSV columns of a membership, in the header's order: the list's fields, user_name as its two parts. */
function membershipCsvColumns(now: Date): SQL {
  const active = activeAt(sql.raw('m.end_date'), now);
  return sql`m.id AS membership_id, m.user_id AS user_id, m.plan_id AS plan_id,
    ${iso(sql.raw('m.start_date'))} AS membership_start_date, ${iso(sql.raw('m.end_date'))} AS membership_end_date,
    ${text(sql.raw('u.first_name'))} AS user_first_name, ${text(sql.raw('u.username'))} AS user_username,
    ${text(sql.raw('p.name'))} AS plan_name, ${text(sql.raw('p.duration'))} AS plan_duration,
    ${text(sql.raw('m.subscription_id'))} AS subscription_id, ${text(sql.raw('m.subscription_status'))} AS subscription_status,
    CASE WHEN ${active} THEN 'active' ELSE 'expired' END AS status,
    ${iso(sql.raw('m.trial_ends_at'))} AS trial_ends_at,
    CASE WHEN m.trial_ends_at IS NOT NULL THEN (${active} AND m.end_date <= m.trial_ends_at)::text END AS in_trial`;
}

/** A JSON string or null, as text: a piece of a JSON object written by hand. */
const jsonText = (e: SQL) => sql`coalesce(to_json(${e})::text, 'null')`;

/**
 * One membership as one JSON text, the fields and their order those of the list's serializer, the
 * trial's fields appended when it has them. Written as one concatenation, every string that may
 * need escaping through to_json (the escaping row_to_json does), the rest (uuids, instants,
 * booleans, constants) as is: building a row and its JSON, and parsing the name object back as
 * json to nest it, cost about as much again as the CSV's columns.
 */
function membershipJsonLine(now: Date): SQL {
  const active = activeAt(sql.raw('m.end_date'), now);
  const userName = sql`CASE WHEN u.first_name IS NULL AND u.username IS NULL THEN 'null'
    ELSE '{"first_name":' || ${jsonText(sql.raw('u.first_name'))} || ',"username":' || ${jsonText(sql.raw('u.username'))} || '}' END`;
  return sql`'{"membership_id":"' || m.id::text || '","user_id":' || to_json(m.user_id)::text
    || ',"plan_id":' || coalesce('"' || m.plan_id::text || '"', 'null')
    || ',"membership_start_date":"' || ${iso(sql.raw('m.start_date'))} || '","membership_end_date":"' || ${iso(sql.raw('m.end_date'))}
    || '","user_name":' || ${userName} || ',"plan_name":' || ${jsonText(sql.raw('p.name'))} || ',"plan_duration":' || ${jsonText(sql.raw('p.duration'))}
    || ',"subscription_id":' || ${jsonText(sql.raw('m.subscription_id'))} || ',"subscription_status":' || ${jsonText(sql.raw('m.subscription_status'))}
    || ',"status":' || CASE WHEN ${active} THEN '"active"' ELSE '"expired"' END
    || CASE WHEN m.trial_ends_at IS NULL THEN '}'
       ELSE ',"trial_ends_at":"' || ${iso(sql.raw('m.trial_ends_at'))} || '","in_trial":' || (${active} AND m.end_date <= m.trial_ends_at)::text || '}' END`;
}

/** The payment's decimal amount as the payment object shows it (paymentJson). */
const amount = sql.raw(`round(p.amount_minor::numeric / power(10::numeric, ${DIGITS_SQL.replaceAll('currency', 'p.currency')}), ${DIGITS_SQL.replaceAll('currency', 'p.currency')})::text`);

const PAYMENT_CSV_COLUMNS = sql`p.id AS payment_id, p.provider AS provider, p.merchant_account_id AS merchant_account_id, p.user_id AS user_id,
  p.plan_id AS plan_id, ${amount} AS amount, p.amount_minor AS amount_minor, p.currency AS currency, p.status AS status,
  ${text(sql.raw('p.checkout_session_id'))} AS checkout_session_id, ${text(sql.raw('p.payment_intent_id'))} AS payment_intent_id,
  ${text(sql.raw('p.invoice_id'))} AS invoice_id, ${text(sql.raw('p.subscription_id'))} AS subscription_id,
  ${text(sql.raw('p.customer_id'))} AS customer_id, ${iso(sql.raw('p.created_at'))} AS created_at, ${iso(sql.raw('p.updated_at'))} AS updated_at`;

/** The payment object's fields of `p`, in its order, as a row whose column names are the JSON's keys. */
const PAYMENT_JSON_ROW = sql`SELECT p.id AS payment_id, p.provider AS provider, p.merchant_account_id AS merchant_account_id, p.user_id AS user_id,
  p.plan_id AS plan_id, ${amount} AS amount, p.amount_minor AS amount_minor, p.currency AS currency, p.status AS status,
  p.checkout_session_id AS checkout_session_id, p.payment_intent_id AS payment_intent_id, p.invoice_id AS invoice_id,
  p.subscription_id AS subscription_id, p.customer_id AS customer_id, ${iso(sql.raw('p.created_at'))} AS created_at, ${iso(sql.raw('p.updated_at'))} AS updated_at`;

/** COPY's options for each format (see above). */
const COPY_OPTIONS: Record<ExportFormat, string> = {
  csv: 'FORMAT csv, HEADER true',
  ndjson: `FORMAT csv, HEADER false, QUOTE E'\\x01', DELIMITER E'\\x02'`,
};

/**
 * The COPY statement of a membership export, its values inlined (COPY takes no parameters; every
 * value is a validated id, uuid or instant, and inlining escapes quotes all the same).
 */
export function membershipsCopy(projectId: string, filter: MembershipExportFilter, format: ExportFormat, now: Date): SQL {
  const [column, direction] = SORTS[filter.sort ?? '-created_at'];
  const columns = format === 'csv' ? membershipCsvColumns(now) : sql`${membershipJsonLine(now)} AS line`;
  const select = sql`SELECT ${columns} FROM memberships m
    LEFT JOIN plans p ON p.id = m.plan_id
    LEFT JOIN users u ON u.project_id = m.project_id AND u.user_id = m.user_id
    WHERE ${membershipWhere(projectId, filter, now)}
    ORDER BY ${sql.raw(`m.${column} ${direction}, m.id ${direction}`)}`;
  return sql`COPY (${select}) TO STDOUT WITH (${sql.raw(COPY_OPTIONS[format])})`.inlineParams();
}

/** The COPY statement of a payment export, newest first as the list orders them. */
export function paymentsCopy(projectId: string, filter: PaymentFilter, format: ExportFormat): SQL {
  const columns = format === 'csv' ? PAYMENT_CSV_COLUMNS : sql`row_to_json(r)::text AS line`;
  const lateral = format === 'csv' ? sql`` : sql`CROSS JOIN LATERAL (${PAYMENT_JSON_ROW}) r`;
  const select = sql`SELECT ${columns} FROM payments p ${lateral} WHERE ${paymentWhere(projectId, filter)} ORDER BY p.created_at DESC, p.id DESC`;
  return sql`COPY (${select}) TO STDOUT WITH (${sql.raw(COPY_OPTIONS[format])})`.inlineParams();
}
