import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.http).toEqual({ port: 3000, host: '127.0.0.1', trustProxy: false });
    expect(c.storage).toEqual({ kind: 'pglite', dataDir: './data' });
    expect(c.rateLimit).toEqual({
      enabled: true,
      perKey: 100,
      perIp: 300,
      burst: 20,
      suspension: { threshold: 10, windowSec: 600, durationSec: 900 },
    });
    expect(loadConfig({ TENURE_SUSPENSION: 'off' }).rateLimit.suspension).toBeNull();
    expect(c.webhooks.allowPrivate).toBe(false);
    expect(c.log.level).toBe('info');
    expect(c.redisUrl).toBeUndefined();
  });

  it('switches to PostgreSQL with DATABASE_URL', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db', DATABASE_POOL_SIZE: '4' });
    expect(c.storage).toEqual({ kind: 'postgres', url: 'postgres://u@h:5432/db', poolSize: 4, dataDir: './data' });
  });

  it('reads flags and numbers', () => {
    const c = loadConfig({ TRUST_PROXY: 'true', TENURE_WEBHOOK_ALLOW_PRIVATE: '1', TENURE_RATE_LIMIT_KEY: '5000', PORT: '0' });
    expect(c.http.trustProxy).toBe(true);
    expect(c.webhooks.allowPrivate).toBe(true);
    expect(c.rateLimit.perKey).toBe(5000);
    expect(c.http.port).toBe(0);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).storage.kind).toBe('pglite');
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '3.5'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['REDIS_URL', 'http://localhost'],
    ['LOG_LEVEL', 'loud'],
    ['TRUST_PROXY', 'maybe'],
    ['TENURE_RATE_LIMIT_KEY', '0'],
    ['TENURE_RATE_LIMIT_BURST', 'many'],
    ['DATABASE_POOL_SIZE', '0'],
  ])('refuses %s=%s, naming the variable', (variable, value) => {
    let caught: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(variable);
    expect((caught as Error).message).toContain(variable);
  });

  it('never echoes a URL value, which may hold a password', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://user:hunter2@h/db' })).toThrow(/^(?!.*hunter2)/s);
  });
});
