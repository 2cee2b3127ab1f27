import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { ApiKeyScope } from '../../src/domain/projects/api-key-scope.js';
import type { ApiKeyMetadata } from '../../src/domain/projects/projects.service.js';
import type { BanView, UserView } from '../../src/domain/users/user.view.js';
import { rowsOf } from '../../src/database/db.js';
import { future, userId, type Harness, type Tenant } from './harness.js';

/** Seeding API keys, users and bans through the API, for the keys, settings, users and bans suites. */

/** Issues a key through the API with `t`'s key: full unless `scope` says otherwise. */
export async function createKey(t: Tenant, label = 'second', scope?: ApiKeyScope): Promise<{ key: string; metadata: ApiKeyMetadata }> {
  const res = await t.request({ method: 'POST', url: `${t.base}/integrations/api-keys`, payload: { label, ...(scope ? { scope } : {}) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** How many of the project's keys are not revoked, read from the table. */
export async function activeKeys(h: Harness, projectId: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await h.database.db.execute(sql`SELECT count(*)::int AS n FROM api_keys WHERE project_id = ${projectId} AND revoked_at IS NULL`),
  );
  return row!.n;
}

/** Records a user the way the product does: a membership that names them. Returns their id. */
export async function seedUser(
  t: Tenant,
  name: { first_name?: string | null; username?: string | null } | null = null,
  id = userId(),
): Promise<string> {
  const payload = { user_id: id, end_date: future(10).iso, ...(name ? { user_name: name } : {}) };
  const res = await t.request({ method: 'POST', url: `${t.base}/memberships`, payload });
  expect(res.statusCode, res.body).toBe(201);
  return id;
}

export async function ban(t: Tenant, id: string, reason?: string): Promise<BanView> {
  const res = await t.request({ method: 'PUT', url: `${t.base}/ban/${id}`, payload: reason === undefined ? {} : { reason } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

export async function listUsers(t: Tenant, query = ''): Promise<{ total: number; data: UserView[] }> {
  const res = await t.request({ method: 'GET', url: `${t.base}/users${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The documented defaults of every setting (docs/api-keys-settings-users.md). */
export const DEFAULTS = {
  default_language: 'en',
  timezone_preference: 'UTC',
  date_format_preference: 'YYYY-MM-DD',
  time_format_preference: '24h',
  collect_email_on_subscribe: false,
  default_currency: 'USD',
  support_enabled: false,
  ai_enabled: false,
  policies: { terms: null, privacy: null, minimum_age: null },
  page_logo_url: null,
  page_accent_color: null,
  reminder_offsets: ['3d', '1d'],
  quiet_hours: null,
  messages: {},
};

/** For each setting, values it accepts (as stored and shown) and values it refuses, with the message. */
export const SETTING_CASES: { key: string; valid: unknown[]; invalid: [unknown, string][] }[] = [
  {
    key: 'default_language',
    valid: ['de', 'pt-BR', 'haw'],
    invalid: [
      ['english', 'default_language must be an ISO 639 language code, optionally with a region (en, pt-BR)'],
      ['xx', 'default_language must be an ISO 639 language code, optionally with a region (en, pt-BR)'],
      ['EN', 'default_language must be an ISO 639 language code, optionally with a region (en, pt-BR)'],
      [1, 'default_language must be an ISO 639 language code, optionally with a region (en, pt-BR)'],
    ],
  },
  {
    key: 'timezone_preference',
    valid: ['Europe/Berlin', 'America/Argentina/Buenos_Aires', 'UTC'],
    invalid: [
      ['Mars/Olympus_Mons', 'timezone_preference must be an IANA time zone name (UTC, Europe/Berlin)'],
      ['+01:00', 'timezone_preference must be an IANA time zone name (UTC, Europe/Berlin)'],
      ['', 'timezone_preference must be an IANA time zone name (UTC, Europe/Berlin)'],
      [null, 'timezone_preference must be an IANA time zone name (UTC, Europe/Berlin)'],
    ],
  },
  {
    key: 'date_format_preference',
    valid: ['DD/MM/YYYY', 'MM/DD/YYYY', 'DD.MM.YYYY'],
    invalid: [['yyyy-mm-dd', 'date_format_preference must be one of YYYY-MM-DD, DD/MM/YYYY, MM/DD/YYYY, DD.MM.YYYY, DD-MM-YYYY, YYYY/MM/DD']],
  },
  {
    key: 'time_format_preference',
    valid: ['12h', '24h'],
    invalid: [
      ['24', 'time_format_preference must be one of 24h, 12h'],
      [24, 'time_format_preference must be one of 24h, 12h'],
    ],
  },
  {
    key: 'collect_email_on_subscribe',
    valid: [true, false],
    invalid: [
      ['true', 'collect_email_on_subscribe must be true or false'],
      [1, 'collect_email_on_subscribe must be true or false'],
    ],
  },
  {
    key: 'default_currency',
    valid: ['EUR', 'JPY'],
    invalid: [
      ['usd', 'default_currency must be an ISO 4217 currency code (USD, EUR)'],
      ['ABC', 'default_currency must be an ISO 4217 currency code (USD, EUR)'],
      ['US', 'default_currency must be an ISO 4217 currency code (USD, EUR)'],
    ],
  },
  { key: 'support_enabled', valid: [true], invalid: [[null, 'support_enabled must be true or false']] },
  { key: 'ai_enabled', valid: [true], invalid: [['yes', 'ai_enabled must be true or false']] },
  {
    key: 'policies',
    valid: [
      { terms: { type: 'url', value: 'https://example.com/terms' }, privacy: { type: 'url', value: 'https://example.com/privacy' }, minimum_age: 18 },
      { terms: null, privacy: null, minimum_age: null },
    ],
    invalid: [
      ['none', 'policies must be an object with terms, privacy and minimum_age'],
      [[], 'policies must be an object with terms, privacy and minimum_age'],
      [{ terms: { type: 'url', value: 'not a url' } }, 'policies.terms must be null or {"type": "url", "value": <an http(s) URL>}'],
      [{ privacy: { type: 'url', value: 'javascript:alert(1)' } }, 'policies.privacy must be null or {"type": "url", "value": <an http(s) URL>}'],
      [{ terms: { type: 'text', value: 'https://example.com' } }, 'policies.terms must be null or {"type": "url", "value": <an http(s) URL>}'],
      [{ minimum_age: 17.5 }, 'policies.minimum_age must be null or an integer from 0 to 120'],
      [{ minimum_age: '18' }, 'policies.minimum_age must be null or an integer from 0 to 120'],
      [{ minimum_age: -1 }, 'policies.minimum_age must be null or an integer from 0 to 120'],
      [{ cookies: null }, 'policies has unknown fields: cookies'],
    ],
  },
  {
    key: 'page_logo_url',
    valid: ['https://cdn.example.com/logo.png', null],
    invalid: [
      ['http://cdn.example.com/logo.png', 'page_logo_url must be null or an https URL of at most 2048 characters, without user or password'],
      ['javascript:alert(1)', 'page_logo_url must be null or an https URL of at most 2048 characters, without user or password'],
    ],
  },
  {
    key: 'page_accent_color',
    valid: ['#3a36c9', null],
    invalid: [
      ['blue', 'page_accent_color must be null or a colour as #rrggbb (e.g. #3a36c9)'],
      ['#fff', 'page_accent_color must be null or a colour as #rrggbb (e.g. #3a36c9)'],
    ],
  },
  {
    key: 'reminder_offsets',
    valid: [['7d', '1d', '12h'], []],
    invalid: [
      [['3 days'], 'reminder_offsets must be a list of at most 10 durations before the end, in days or hours from 1h to 90d (["3d", "1d", "12h"]), or [] for none'],
      ['3d', 'reminder_offsets must be a list of at most 10 durations before the end, in days or hours from 1h to 90d (["3d", "1d", "12h"]), or [] for none'],
      [['91d'], 'reminder_offsets must be a list of at most 10 durations before the end, in days or hours from 1h to 90d (["3d", "1d", "12h"]), or [] for none'],
    ],
  },
  {
    key: 'quiet_hours',
    valid: ['22:00-08:00', null],
    invalid: [
      ['22-8', 'quiet_hours must be null or "HH:MM-HH:MM" in timezone_preference, two different times (22:00-08:00 crosses midnight)'],
      ['08:00-08:00', 'quiet_hours must be null or "HH:MM-HH:MM" in timezone_preference, two different times (22:00-08:00 crosses midnight)'],
    ],
  },
  {
    key: 'messages',
    valid: [
      {},
      { welcome: { enabled: false, text: null }, reminder: { enabled: true, text: 'Hi {name}: {plan} ends {end_date}. {link}' } },
      { expired: { enabled: true, text: { en: '{plan} ended.', de: '{plan} ist abgelaufen.' } } },
    ],
    invalid: [
      [{ welcome: { text: 'Hi {nmae}' } }, 'messages.welcome.text uses unknown placeholder {nmae}; welcome allows {name}, {plan}, {end_date}, {status_command}'],
      [{ cancelled: { text: { de: 'Bis {link}' } } }, 'messages.cancelled.text.de uses unknown placeholder {link}; cancelled allows {name}, {plan}, {end_date}, {status_command}'],
      [{ reminder: { text: 'Ends {End_date}' } }, 'messages.reminder.text has a { or } that is not a placeholder; reminder allows {name}, {plan}, {end_date}, {status_command}, {link}'],
      [{ goodbye: { enabled: false } }, 'messages has an unknown message: goodbye; the messages are welcome, confirmation, invite, reminder, expired, payment_failed, cancelled'],
      [{ welcome: { enabled: 'no' } }, 'messages.welcome.enabled must be true or false'],
      [{ welcome: true }, 'messages.welcome must be an object {"enabled": true|false, "text": null|"…"|{"en": "…"}}'],
      [[], 'messages must be an object of messages (welcome, confirmation, invite, reminder, expired, payment_failed, cancelled), each {"enabled": true|false, "text": null|"…"|{"en": "…"}}'],
    ],
  },
];
