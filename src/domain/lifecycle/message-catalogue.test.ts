import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogueLanguage, fill, formatInstant, loadCatalogues, placeholdersOf, strayBraces, translate } from './message-catalogue.js';

/** The message catalogue (locales/, src/domain/lifecycle/message-catalogue.ts): complete in every language, and how instants are written. */

describe('the catalogue in locales/', () => {
  const all = loadCatalogues();
  const en = all.get('en')!;

  it('has English and at least one other complete language', () => {
    expect([...all.keys()]).toContain('de');
    expect(all.size).toBeGreaterThanOrEqual(2);
  });

  for (const [language, catalogue] of all) {
    it(`${language}: every key of English, no other, each with English's placeholders and no stray brace`, () => {
      expect(Object.keys(catalogue).sort()).toStrictEqual(Object.keys(en).sort());
      for (const [key, text] of Object.entries(catalogue)) {
        expect(placeholdersOf(text).sort(), `${language} ${key}: ${text}`).toStrictEqual(placeholdersOf(en[key]!).sort());
        expect(strayBraces(text), `${language} ${key}: ${text}`).toBe(false);
        expect(text.trim(), `${language} ${key}`).not.toBe('');
      }
    });
  }

  it('a file a translator adds is read as it is; a key it lacks falls back to English', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'locales-'));
    writeFileSync(path.join(dir, 'en.json'), JSON.stringify({ a: 'A {x}', b: 'B' }));
    writeFileSync(path.join(dir, 'fr.json'), JSON.stringify({ a: 'Un {x}' }));
    const loaded = loadCatalogues(dir);
    expect(loaded.get('fr')).toStrictEqual({ a: 'Un {x}' });
    writeFileSync(path.join(dir, 'xx.json'), JSON.stringify({ a: 3 }));
    expect(() => loadCatalogues(dir)).toThrow(/xx\.json must be one JSON object of texts/);
  });
});

describe('languages and words', () => {
  it('a region falls back to its language, an unknown language to English', () => {
    expect(catalogueLanguage('de-AT')).toBe('de');
    expect(catalogueLanguage('de')).toBe('de');
    expect(catalogueLanguage('pt-BR')).toBe('en');
    expect(translate('de', 'button.renew')).toBe('Verlängern');
    expect(translate('ja', 'button.renew')).toBe('Renew');
  });

  it('fills placeholders, leaves unknown names as written, and finds stray braces', () => {
    expect(fill('Hi {name}, {plan}!', { name: 'Ana', plan: 'Gold' })).toBe('Hi Ana, Gold!');
    expect(fill('{other}', {})).toBe('{other}');
    expect(placeholdersOf('{a} {b} {a}')).toStrictEqual(['a', 'b']);
    expect(strayBraces('ok {plan}')).toBe(false);
    expect(strayBraces('{Plan}')).toBe(true);
    expect(strayBraces('{plan')).toBe(true);
  });
});

describe('instants as the project writes them', () => {
  const t = new Date('2030-01-02T15:04:00.000Z');
  it('the date format, 24 h or 12 h, the zone and its short name in the language', () => {
    expect(formatInstant(t, { language: 'en', timeZone: 'UTC', dateFormat: 'YYYY-MM-DD', timeFormat: '24h' })).toBe('2030-01-02 15:04 UTC');
    expect(formatInstant(t, { language: 'en', timeZone: 'America/New_York', dateFormat: 'MM/DD/YYYY', timeFormat: '12h' })).toBe('01/02/2030 10:04 AM EST');
    expect(formatInstant(t, { language: 'de', timeZone: 'Europe/Berlin', dateFormat: 'DD.MM.YYYY', timeFormat: '24h' })).toBe('02.01.2030 16:04 MEZ');
    expect(formatInstant(new Date('2030-07-01T22:30:00Z'), { language: 'en', timeZone: 'Europe/Berlin', dateFormat: 'DD/MM/YYYY', timeFormat: '24h' })).toBe('02/07/2030 00:30 CEST');
  });
});
