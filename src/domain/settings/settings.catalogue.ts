/**
 * The project settings (docs/api-keys-settings-users.md, "Settings"): every key, its default and its validator. A key
 * without a stored value has its default; a validator returns the value to store (normalised) or
 * the sentence naming what is wrong, which always starts with the key.
 */

import { parseOffsets, parseQuietHours } from '../lifecycle/reminder-rules.js';
import { parseMessages, type MessagesSetting } from '../lifecycle/member-messages.js';

export interface Policy {
  type: 'url';
  value: string;
}

export interface Policies {
  terms: Policy | null;
  privacy: Policy | null;
  minimum_age: number | null;
}

export interface Settings {
  default_language: string;
  timezone_preference: string;
  date_format_preference: string;
  time_format_preference: '24h' | '12h';
  collect_email_on_subscribe: boolean;
  default_currency: string;
  support_enabled: boolean;
  ai_enabled: boolean;
  policies: Policies;
  /** The public plan page's logo (docs/web.md, "Branding"): an https URL, or null for none. */
  page_logo_url: string | null;
  /** The public pages' accent colour, `#rrggbb` (docs/web.md, "Branding"), or null for tenure's own. */
  page_accent_color: string | null;
  /** Reminders before a membership ends (docs/lifecycle.md): durations before the end, furthest first; [] for none. */
  reminder_offsets: string[];
  /** `HH:MM-HH:MM` in `timezone_preference` when reminders wait (docs/lifecycle.md), or null for none. */
  quiet_hours: string | null;
  /** The bot's messages to members (docs/lifecycle.md, "Changing or turning off a message"): per message, on or off and the owner's text. */
  messages: MessagesSetting;
}

export type SettingKey = keyof Settings;

export const DATE_FORMATS = ['YYYY-MM-DD', 'DD/MM/YYYY', 'MM/DD/YYYY', 'DD.MM.YYYY', 'DD-MM-YYYY', 'YYYY/MM/DD'] as const;
export const TIME_FORMATS = ['24h', '12h'] as const;

export const DEFAULT_SETTINGS: Settings = {
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

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };
const valid = <T>(value: T): Checked<T> => ({ ok: true, value });
const invalid = (message: string): Checked<never> => ({ ok: false, message });

const languages = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
const regions = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
const currencies = new Set(Intl.supportedValuesOf('currency'));

/** A language code ISO 639 knows (`en`, `pt`), optionally with an ISO 3166 region (`pt-BR`). */
function isLanguage(v: string): boolean {
  const m = /^([a-z]{2,3})(?:-([A-Z]{2}))?$/.exec(v);
  return !!m && languages.of(m[1]!) !== undefined && (m[2] === undefined || regions.of(m[2]) !== undefined);
}

/** An IANA zone name the runtime knows (`UTC`, `Europe/Berlin`); UTC offsets like `+01:00` are not names. */
function isTimeZone(v: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(v)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: v });
    return true;
  } catch {
    return false;
  }
}

const isHttpUrl = (v: string): boolean => {
  if (v.length > 2048 || !URL.canParse(v)) return false;
  const { protocol, hostname } = new URL(v);
  return (protocol === 'https:' || protocol === 'http:') && hostname !== '';
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const oneOf =
  <T extends string>(key: string, allowed: readonly T[]) =>
  (v: unknown): Checked<T> =>
    typeof v === 'string' && (allowed as readonly string[]).includes(v) ? valid(v as T) : invalid(`${key} must be one of ${allowed.join(', ')}`);

const bool = (key: string) => (v: unknown): Checked<boolean> => (typeof v === 'boolean' ? valid(v) : invalid(`${key} must be true or false`));

const text = (key: string, test: (v: string) => boolean, what: string) => (v: unknown): Checked<string> =>
  typeof v === 'string' && test(v) ? valid(v) : invalid(`${key} must be ${what}`);

function policy(key: string, v: unknown): Checked<Policy | null> {
  if (v === null) return valid(null);
  if (isObject(v) && v.type === 'url' && typeof v.value === 'string' && isHttpUrl(v.value) && Object.keys(v).length === 2) {
    return valid({ type: 'url', value: v.value });
  }
  return invalid(`policies.${key} must be null or {"type": "url", "value": <an http(s) URL>}`);
}

function policies(v: unknown): Checked<Policies> {
  if (!isObject(v)) return invalid('policies must be an object with terms, privacy and minimum_age');
  const unknown = Object.keys(v).filter((k) => !['terms', 'privacy', 'minimum_age'].includes(k));
  if (unknown.length > 0) return invalid(`policies has unknown fields: ${unknown.join(', ')}`);
  const terms = policy('terms', v.terms ?? null);
  if (!terms.ok) return terms;
  const privacy = policy('privacy', v.privacy ?? null);
  if (!privacy.ok) return privacy;
  const age = v.minimum_age ?? null;
  if (age !== null && !(Number.isInteger(age) && (age as number) >= 0 && (age as number) <= 120)) {
    return invalid('policies.minimum_age must be null or an integer from 0 to 120');
  }
  return valid({ terms: terms.value, privacy: privacy.value, minimum_age: age as number | null });
}

/** Only https: the page's Content-Security-Policy allows images from https origins alone (docs/web.md). */
function logoUrl(v: unknown): Checked<string | null> {
  if (v === null) return valid(null);
  if (typeof v === 'string' && v.length <= 2048 && URL.canParse(v)) {
    const url = new URL(v);
    if (url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '') return valid(url.href);
  }
  return invalid('page_logo_url must be null or an https URL of at most 2048 characters, without user or password');
}

/** Any colour is taken: the pages pick the text drawn on it so WCAG AA contrast holds (src/domain/web/branding.ts). */
function accentColor(v: unknown): Checked<string | null> {
  if (v === null) return valid(null);
  if (typeof v === 'string' && /^#[0-9a-fA-F]{6}$/.test(v)) return valid(v.toLowerCase());
  return invalid('page_accent_color must be null or a colour as #rrggbb (e.g. #3a36c9)');
}

function quietHours(v: unknown): Checked<string | null> {
  if (v === null) return valid(null);
  if (typeof v === 'string' && parseQuietHours(v) !== null) return valid(v);
  return invalid('quiet_hours must be null or "HH:MM-HH:MM" in timezone_preference, two different times (22:00-08:00 crosses midnight)');
}

export const SETTING_VALIDATORS: { [K in SettingKey]: (value: unknown) => Checked<Settings[K]> } = {
  default_language: text('default_language', isLanguage, 'an ISO 639 language code, optionally with a region (en, pt-BR)'),
  timezone_preference: text('timezone_preference', isTimeZone, 'an IANA time zone name (UTC, Europe/Berlin)'),
  date_format_preference: oneOf('date_format_preference', DATE_FORMATS),
  time_format_preference: oneOf('time_format_preference', TIME_FORMATS),
  collect_email_on_subscribe: bool('collect_email_on_subscribe'),
  default_currency: text('default_currency', (v) => /^[A-Z]{3}$/.test(v) && currencies.has(v), 'an ISO 4217 currency code (USD, EUR)'),
  support_enabled: bool('support_enabled'),
  ai_enabled: bool('ai_enabled'),
  policies,
  page_logo_url: logoUrl,
  page_accent_color: accentColor,
  reminder_offsets: (v) => parseOffsets('reminder_offsets', v),
  quiet_hours: quietHours,
  messages: parseMessages,
};

export const SETTING_KEYS = Object.keys(DEFAULT_SETTINGS) as SettingKey[];

export const isSettingKey = (key: string): key is SettingKey => Object.hasOwn(DEFAULT_SETTINGS, key);
