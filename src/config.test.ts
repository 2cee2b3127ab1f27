import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.http).toEqual({ port: 3000, host: '127.0.0.1', trustProxy: false });
    expect(c.storage).toEqual({ kind: 'pglite', dataDir: './data', lockStaleMs: 10_000, cacheMb: 16 });
    expect(c.rateLimit).toEqual({
      enabled: true,
      perKey: 100,
      perIp: 300,
      burst: 20,
      callbacks: 6000,
      suspension: { threshold: 10, windowSec: 600, durationSec: 900 },
    });
    expect(loadConfig({ TENURE_SUSPENSION: 'off' }).rateLimit.suspension).toBeNull();
    expect(c.webhooks.allowPrivate).toBe(false);
    expect(c.webhooks).toMatchObject({ timeoutMs: 10_000, leaseMs: 60_000 });
    expect(c.log.level).toBe('info');
    expect(c.redisUrl).toBeUndefined();
  });

  it('keeps a Discord gateway per bot unless TENURE_DISCORD_GATEWAY is off', () => {
    expect(loadConfig({}).access.discordGateway).toBe(true);
    expect(loadConfig({ TENURE_DISCORD_GATEWAY: 'false' }).access.discordGateway).toBe(false);
    expect(() => loadConfig({ TENURE_DISCORD_GATEWAY: 'sometimes' })).toThrow(ConfigError);
  });

  it('switches to PostgreSQL with DATABASE_URL', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db', DATABASE_POOL_SIZE: '4' });
    expect(c.storage).toEqual({ kind: 'postgres', url: 'postgres://u@h:5432/db', poolSize: 4, dataDir: './data' });
  });

  it('reads flags and numbers', () => {
    const c = loadConfig({ TRUST_PROXY: 'true', TENURE_WEBHOOK_ALLOW_PRIVATE: '1', TENURE_RATE_LIMIT_KEY: '5000', PORT: '0' });
    expect(c.http.trustProxy).toBe(1);
    expect(c.webhooks.allowPrivate).toBe(true);
    expect(c.rateLimit.perKey).toBe(5000);
    expect(c.http.port).toBe(0);
  });

  it('takes a webhook lease down to 1.5 × the attempt timeout, and no lower', () => {
    expect(loadConfig({ TENURE_WEBHOOK_LEASE_SECONDS: '15' }).webhooks).toMatchObject({ timeoutMs: 10_000, leaseMs: 15_000 });
    expect(loadConfig({ TENURE_WEBHOOK_TIMEOUT_SECONDS: '2', TENURE_WEBHOOK_LEASE_SECONDS: '3' }).webhooks).toMatchObject({ timeoutMs: 2_000, leaseMs: 3_000 });
    for (const env of [{ TENURE_WEBHOOK_LEASE_SECONDS: '14' }, { TENURE_WEBHOOK_TIMEOUT_SECONDS: '4', TENURE_WEBHOOK_LEASE_SECONDS: '5' }]) {
      expect(() => loadConfig(env)).toThrow(/^Invalid configuration: TENURE_WEBHOOK_LEASE_SECONDS must be at least 1\.5 × TENURE_WEBHOOK_TIMEOUT_SECONDS/);
    }
  });

  it('reads TRUST_PROXY as off, a hop count or the proxies’ addresses and ranges', () => {
    const trust = (v: string) => loadConfig({ TRUST_PROXY: v }).http.trustProxy;
    expect([trust('false'), trust('0'), trust('off')]).toStrictEqual([false, false, false]);
    expect([trust('true'), trust('on'), trust('yes'), trust('1')]).toStrictEqual([1, 1, 1, 1]);
    expect(trust('2')).toBe(2);
    expect(trust('10.0.0.0/8, 192.168.1.5,loopback, fd00::/8')).toStrictEqual(['10.0.0.0/8', '192.168.1.5', 'loopback', 'fd00::/8']);
    for (const bad of ['maybe', '10.0.0.0/33', '10.0.0.0/8/1', 'proxy.internal', '10.0.0.1,']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/^Invalid configuration: TRUST_PROXY must be true, false, a hop count, or a comma-separated list/);
    }
  });

  it('keeps history 30 days unless told, and never less than live updates resume from', () => {
    expect(loadConfig({}).retention.historyMs).toBe(30 * 86_400_000);
    expect(loadConfig({ TENURE_HISTORY_RETENTION: '2d' }).retention.historyMs).toBe(2 * 86_400_000);
    expect(() => loadConfig({ TENURE_HISTORY_RETENTION: '2d', TENURE_EVENT_RETENTION: '3d' })).toThrow(/^Invalid configuration: TENURE_HISTORY_RETENTION must be at least TENURE_EVENT_RETENTION/);
    // Telegram redelivers an update for up to a day: a handled one is kept at least that long.
    expect(() => loadConfig({ TENURE_HISTORY_RETENTION: '23h' })).toThrow(/TENURE_HISTORY_RETENTION must be a duration like 90s, 15m, 24h or 7d, from 86400 s/);
  });

  it('takes Telegram webhook mode only with the URL Telegram posts to', () => {
    expect(loadConfig({}).access.telegram).toStrictEqual({
      inviteMode: 'single_use',
      inviteTtlMs: 86_400_000,
      updates: 'polling',
      webhookUrl: undefined,
      perSecond: 25,
      chatPerSecond: 5,
    });
    expect(loadConfig({ TENURE_TELEGRAM_UPDATES: 'webhook', TENURE_TELEGRAM_WEBHOOK_URL: 'https://tenure.example.com/' }).access.telegram).toMatchObject({
      updates: 'webhook',
      webhookUrl: 'https://tenure.example.com',
    });
    expect(() => loadConfig({ TENURE_TELEGRAM_UPDATES: 'webhook' })).toThrow(/^Invalid configuration: TENURE_TELEGRAM_WEBHOOK_URL must be set when TENURE_TELEGRAM_UPDATES is webhook/);
    expect(() => loadConfig({ TENURE_TELEGRAM_INVITE_MODE: 'shared' })).toThrow(/TENURE_TELEGRAM_INVITE_MODE must be single_use or join_request/);
  });

  it('reads how soon an abandoned data-directory lock is taken over', () => {
    expect(loadConfig({ TENURE_DATA_DIR_LOCK_STALE_SECONDS: '3' }).storage).toEqual({ kind: 'pglite', dataDir: './data', lockStaleMs: 3_000, cacheMb: 16 });
    expect(loadConfig({ TENURE_EMBEDDED_CACHE_MB: '64' }).storage).toMatchObject({ kind: 'pglite', cacheMb: 64 });
    expect(() => loadConfig({ TENURE_EMBEDDED_CACHE_MB: '0' })).toThrow(/TENURE_EMBEDDED_CACHE_MB/);
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
    ['TENURE_WEBHOOK_TIMEOUT_SECONDS', '0'],
    ['TENURE_WEBHOOK_LEASE_SECONDS', '1'],
    ['TENURE_DATA_DIR_LOCK_STALE_SECONDS', '1'],
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

  it('splits TENURE_STRIPE_API_URL into stripe-node\'s host, port and protocol, and reads the payments grace period', () => {
    expect(loadConfig({}).payments).toStrictEqual({ stripe: { host: 'api.stripe.com', port: 443, protocol: 'https' }, gracePeriodMs: 3 * 86_400_000, reconcileMs: 600_000 });
    expect(loadConfig({ TENURE_STRIPE_API_URL: 'http://127.0.0.1:12111/', TENURE_PAYMENTS_GRACE_PERIOD: '0s', TENURE_PAYMENTS_RECONCILE_SECONDS: '60' }).payments).toStrictEqual({
      stripe: { host: '127.0.0.1', port: 12111, protocol: 'http' },
      gracePeriodMs: 0,
      reconcileMs: 60_000,
    });
    expect(loadConfig({ TENURE_STRIPE_API_URL: 'http://[::1]:8080' }).payments.stripe.host).toBe('::1');
    expect(() => loadConfig({ TENURE_STRIPE_API_URL: 'https://api.stripe.com/v1' })).toThrow(/TENURE_STRIPE_API_URL must be an http:\/\/ or https:\/\/ URL without a path/);
    expect(() => loadConfig({ TENURE_PAYMENTS_GRACE_PERIOD: '61d' })).toThrow(/TENURE_PAYMENTS_GRACE_PERIOD/);
  });
});
