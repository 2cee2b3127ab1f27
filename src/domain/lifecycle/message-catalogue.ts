import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The words of the bot's messages to members (docs/lifecycle.md, "Languages"): one JSON file per
 * language in `locales/` (`en.json`, `de.json`), one key per message, texts with `{placeholder}`s.
 * A translator adds a language by adding a file: every file there is read at start, and a key a
 * file lacks falls back to English. Plain `{name}` substitution is all the texts need (where English
 * would need a plural, the catalogue has two keys: `confirmation.join_one`, `confirmation.join_many`),
 * so no message-format library.
 */

export type Catalogue = Readonly<Record<string, string>>;

/** `locales/` at the repository's root: three levels up from this module, in src/ and in dist/ alike. */
export const LOCALES_DIR = fileURLToPath(new URL('../../../locales/', import.meta.url));

/** The language of the fallback: every key is in it. */
export const BASE_LANGUAGE = 'en';

const PLACEHOLDER = /\{([a-z_]+)\}/g;

/** Every `{placeholder}` named in a text, once each, in order. */
export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** Any `{` or `}` that is not part of a `{lowercase_name}` placeholder (a typo like `{Plan}` or `{plan`). */
export function strayBraces(text: string): boolean {
  return /[{}]/.test(text.replace(PLACEHOLDER, ''));
}

/** The text with each `{placeholder}` replaced by its value; a name without a value is left as written. */
export function fill(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => values[name] ?? whole);
}

/** Every `<language>.json` of `dir`, by language code (the file's name). */
export function loadCatalogues(dir: string = LOCALES_DIR): Map<string, Catalogue> {
  const out = new Map<string, Catalogue>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const parsed = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
      throw new Error(`locales/${file} must be one JSON object of texts (key → string)`);
    }
    out.set(file.slice(0, -'.json'.length), parsed as Catalogue);
  }
  if (!out.has(BASE_LANGUAGE)) throw new Error(`locales/${BASE_LANGUAGE}.json is missing: it is every other language's fallback`);
  return out;
}

let loaded: Map<string, Catalogue> | null = null;
/** The catalogues, read once per process. */
export function catalogues(): Map<string, Catalogue> {
  loaded ??= loadCatalogues();
  return loaded;
}

/** The catalogue language for a `default_language` setting: itself (`pt-BR`), its base (`pt`), else English. */
export function catalogueLanguage(language: string): string {
  const all = catalogues();
  if (all.has(language)) return language;
  const base = language.split('-')[0]!;
  return all.has(base) ? base : BASE_LANGUAGE;
}

/** The text of `key` in `language` (falling back to English), filled with `values`. */
export function translate(language: string, key: string, values: Readonly<Record<string, string>> = {}): string {
  const all = catalogues();
  const text = all.get(catalogueLanguage(language))?.[key] ?? all.get(BASE_LANGUAGE)![key];
  if (text === undefined) throw new Error(`no message ${key} in locales/${BASE_LANGUAGE}.json`);
  return fill(text, values);
}

/** How the project writes an instant (settings `default_language`, `timezone_preference`, `date_format_preference`, `time_format_preference`). */
export interface InstantFormat {
  language: string;
  timeZone: string;
  /** One of the settings' DATE_FORMATS: `YYYY-MM-DD`, `DD.MM.YYYY`, … */
  dateFormat: string;
  timeFormat: '24h' | '12h';
}

/**
 * The zone's short name at `t`: in the language when it has one (`MEZ`), else the English of
 * Britain or the US (`CET`, `EST`), else the offset (`GMT+4`): each locale names only some zones.
 */
function zoneName(t: Date, timeZone: string, locale: string): string {
  let fallback: string | null = null;
  for (const l of [locale, 'en-GB', 'en-US']) {
    const name = new Intl.DateTimeFormat(l, { timeZone, timeZoneName: 'short' }).formatToParts(t).find((x) => x.type === 'timeZoneName')?.value;
    if (name === undefined) continue;
    if (!/^(GMT|UTC)[+-−]/.test(name)) return name;
    fallback ??= name;
  }
  return fallback ?? timeZone;
}

/** `2030-01-02 10:00 UTC`, `02.01.2030 11:00 MEZ`, `01/02/2030 10:00 AM UTC`: the date as the project writes it, the time, the zone's short name in its language. */
export function formatInstant(t: Date, f: InstantFormat): string {
  const locale = catalogueLanguage(f.language);
  const numeric = new Intl.DateTimeFormat('en-US', { timeZone: f.timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const p = Object.fromEntries(numeric.formatToParts(t).map((x) => [x.type, x.value]));
  const date = f.dateFormat.replace('YYYY', p.year!).replace('MM', p.month!).replace('DD', p.day!);
  const zone = zoneName(t, f.timeZone, locale);
  const time =
    f.timeFormat === '24h'
      ? `${p.hour}:${p.minute}`
      : new Intl.DateTimeFormat(locale, { timeZone: f.timeZone, hour: 'numeric', minute: '2-digit', hour12: true }).format(t);
  return `${date} ${time} ${zone}`;
}
