import type { SettingsStore } from '../../store/settings.store.js';
import { AppError, fail, ok, type ErrorEntry, type Result } from '../errors.js';
import { DEFAULT_SETTINGS, isSettingKey, SETTING_KEYS, SETTING_VALIDATORS, type SettingKey, type Settings } from './settings.catalogue.js';

/** The statements of SettingsStore this uses (a narrow port: tests give it a small twin). */
export type SettingsStatements = Pick<SettingsStore, 'all' | 'get' | 'setMany'>;

const notFound = (key: string) => fail<never>('NOT_FOUND', `Setting not found: ${key}`);

/** Project settings (docs/api-keys-settings-users.md, "Settings"); every write is validated whole before anything is stored. */
export class SettingsService {
  constructor(private readonly store: SettingsStatements) {}

  /** Every key, stored values over defaults. A stored value that no longer validates shows the default. */
  async all(projectId: string): Promise<Settings> {
    const stored = await this.store.all(projectId);
    const out: Record<string, unknown> = {};
    for (const key of SETTING_KEYS) out[key] = this.effective(key, stored.has(key) ? { value: stored.get(key) } : null);
    return out as unknown as Settings;
  }

  async get(projectId: string, key: string): Promise<Result<Partial<Settings>>> {
    if (!isSettingKey(key)) return notFound(key);
    return ok({ [key]: this.effective(key, await this.store.get(projectId, key)) });
  }

  async put(projectId: string, key: string, value: unknown): Promise<Result<null>> {
    if (!isSettingKey(key)) return notFound(key);
    const checked = SETTING_VALIDATORS[key](value);
    if (!checked.ok) return fail('VALIDATION_ERROR', checked.message);
    await this.store.setMany(projectId, [[key, checked.value]]);
    return ok(null);
  }

  /**
   * Sets several keys at once, all or nothing: every key is checked first, and any unknown key or
   * invalid value refuses the whole batch with one `errors` entry per offending key, in body order.
   */
  async patch(projectId: string, body: Record<string, unknown>): Promise<Result<null>> {
    const keys = Object.keys(body);
    if (keys.length === 0) return fail('VALIDATION_ERROR', 'body must name at least one setting');
    const entries: [string, unknown][] = [];
    const errors: ErrorEntry[] = [];
    for (const key of keys) {
      if (!isSettingKey(key)) {
        errors.push({ message: `Unknown setting: ${key}`, error_code: 'VALIDATION_ERROR' });
        continue;
      }
      const checked = SETTING_VALIDATORS[key](body[key]);
      if (checked.ok) entries.push([key, checked.value]);
      else errors.push({ message: checked.message, error_code: 'VALIDATION_ERROR' });
    }
    if (errors.length > 0) {
      const summary = `Invalid settings: ${errors.map((e) => e.message).join('; ')}`;
      return { ok: false, error: new AppError('VALIDATION_ERROR', summary, errors) };
    }
    await this.store.setMany(projectId, entries);
    return ok(null);
  }

  private effective<K extends SettingKey>(key: K, stored: { value: unknown } | null): Settings[K] {
    if (stored) {
      const checked = SETTING_VALIDATORS[key](stored.value);
      if (checked.ok) return checked.value;
    }
    return DEFAULT_SETTINGS[key];
  }
}
