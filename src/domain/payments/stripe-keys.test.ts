import { describe, expect, it } from 'vitest';
import { normalizeSecretKey, normalizeWebhookSecret } from './stripe-keys.js';

describe('Stripe key rules', () => {
  it('takes secret and restricted keys of the environment\'s mode, trimmed', () => {
    expect(normalizeSecretKey('  sk_test_abc123\n', 'sandbox')).toStrictEqual({ key: 'sk_test_abc123' });
    expect(normalizeSecretKey('rk_live_XYZ9', 'production')).toStrictEqual({ key: 'rk_live_XYZ9' });
  });

  it('names what is wrong: empty, publishable, not a key, the other mode', () => {
    expect(normalizeSecretKey(' ', 'sandbox')).toMatchObject({ problem: expect.stringContaining('must not be empty') });
    expect(normalizeSecretKey('pk_test_abc', 'sandbox')).toMatchObject({ problem: expect.stringContaining('publishable key') });
    expect(normalizeSecretKey('sk_test_a b', 'sandbox')).toMatchObject({ problem: expect.stringContaining('must be a Stripe secret key') });
    expect(normalizeSecretKey('sk_live_abc', 'sandbox')).toMatchObject({ problem: 'secret_key is a live-mode key but environment is sandbox: sandbox takes test-mode keys (sk_test_…)' });
    expect(normalizeSecretKey('rk_test_abc', 'production')).toMatchObject({ problem: expect.stringContaining('(rk_live_…)') });
    expect(normalizeSecretKey(`sk_test_${'a'.repeat(500)}`, 'sandbox')).toMatchObject({ problem: expect.stringContaining('at most 500') });
  });

  it('takes a webhook signing secret as Stripe shows it', () => {
    expect(normalizeWebhookSecret(' whsec_abc+/= ')).toStrictEqual({ secret: 'whsec_abc+/=' });
    expect(normalizeWebhookSecret('abc')).toMatchObject({ problem: expect.stringContaining('whsec_') });
  });
});
