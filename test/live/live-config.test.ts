import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** The live-update settings (docs/live-updates.md "Configuration"): defaults, parsing, refusals. */
describe('live-update configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({}).live).toStrictEqual({
      maxConnectionsPerProject: 100,
      tokenTtlSeconds: 900,
      tokenSecret: undefined,
      actionsPerMinute: 120,
      maxPendingPerAddress: 20,
      eventRetentionMs: 86_400_000,
    });
  });

  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['24h', 86_400_000],
    ['7d', 604_800_000],
    ['90d', 7_776_000_000],
  ])('reads TENURE_EVENT_RETENTION=%s', (value, ms) => {
    // History is kept at least as long (TENURE_HISTORY_RETENTION, 30d by default).
    expect(loadConfig({ TENURE_EVENT_RETENTION: value, TENURE_HISTORY_RETENTION: '90d' }).live.eventRetentionMs).toBe(ms);
  });

  it.each(['24', '1y', '59s', '91d', '1.5h', 'h', '-1h', '24 h'])('refuses TENURE_EVENT_RETENTION=%s, naming it', (value) => {
    expect(() => loadConfig({ TENURE_EVENT_RETENTION: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TENURE_EVENT_RETENTION: value })).toThrow(/^Invalid configuration: TENURE_EVENT_RETENTION must be a duration like 90s/);
  });

  it('refuses a short TENURE_LIVE_TOKEN_SECRET without echoing it', () => {
    let error: unknown;
    try {
      loadConfig({ TENURE_LIVE_TOKEN_SECRET: 'hunter2-hunter2' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe('Invalid configuration: TENURE_LIVE_TOKEN_SECRET must be at least 32 characters');
  });

  it.each([
    ['TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT', '0'],
    ['TENURE_LIVE_TOKEN_TTL_SECONDS', '10'],
    ['TENURE_LIVE_TOKEN_TTL_SECONDS', '86401'],
    ['TENURE_LIVE_ACTIONS_PER_MINUTE', 'many'],
    ['TENURE_LIVE_MAX_PENDING_PER_IP', '0'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });

  it('reads every live setting', () => {
    const secret = 'k'.repeat(32);
    expect(
      loadConfig({
        TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT: '5',
        TENURE_LIVE_TOKEN_TTL_SECONDS: '60',
        TENURE_LIVE_TOKEN_SECRET: secret,
        TENURE_LIVE_ACTIONS_PER_MINUTE: '10',
        TENURE_LIVE_MAX_PENDING_PER_IP: '7',
        TENURE_EVENT_RETENTION: '1h',
      }).live,
    ).toStrictEqual({
      maxConnectionsPerProject: 5,
      tokenTtlSeconds: 60,
      tokenSecret: secret,
      actionsPerMinute: 10,
      maxPendingPerAddress: 7,
      eventRetentionMs: 3_600_000,
    });
  });
});
