import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, isSettingKey, SETTING_KEYS, SETTING_VALIDATORS } from './settings.catalogue.js';

describe('settings catalogue', () => {
  it('has a validator that accepts its own default for every key', () => {
    for (const key of SETTING_KEYS) expect(SETTING_VALIDATORS[key](DEFAULT_SETTINGS[key]), key).toStrictEqual({ ok: true, value: DEFAULT_SETTINGS[key] });
  });

  it('knows only its own keys, not inherited object properties', () => {
    expect(isSettingKey('default_currency')).toBe(true);
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty', '']) expect(isSettingKey(key), key).toBe(false);
  });

  it.each(['UTC', 'Etc/UTC', 'Asia/Kolkata', 'Asia/Calcutta', 'America/Indiana/Indianapolis', 'Etc/GMT+5'])('accepts the time zone %s', (zone) => {
    expect(SETTING_VALIDATORS.timezone_preference(zone).ok).toBe(true);
  });

  it.each(['+05:30', 'GMT+5', 'Europe/', '/UTC', 'Europe//Berlin', 'Nowhere/City', ' UTC'])('refuses the time zone %j', (zone) => {
    expect(SETTING_VALIDATORS.timezone_preference(zone).ok).toBe(false);
  });

  it.each([
    ['en', true],
    ['pt-BR', true],
    ['zh-TW', true],
    ['en-us', false],
    ['en_US', false],
    ['pt-XX', false],
    ['e', false],
    ['english', false],
  ])('language %s → %s', (code, ok) => {
    expect(SETTING_VALIDATORS.default_language(code).ok).toBe(ok);
  });

  it('normalises policies: missing fields become null, extra policy fields are refused', () => {
    expect(SETTING_VALIDATORS.policies({})).toStrictEqual({ ok: true, value: { terms: null, privacy: null, minimum_age: null } });
    expect(SETTING_VALIDATORS.policies({ terms: { type: 'url', value: 'https://x.example/t', extra: 1 } }).ok).toBe(false);
    expect(SETTING_VALIDATORS.policies({ terms: { type: 'url', value: 'ftp://x.example/t' } }).ok).toBe(false);
    expect(SETTING_VALIDATORS.policies({ minimum_age: 120 }).ok).toBe(true);
    expect(SETTING_VALIDATORS.policies({ minimum_age: 121 }).ok).toBe(false);
  });
});
