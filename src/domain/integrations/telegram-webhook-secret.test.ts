import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';
import { TelegramWebhookSecrets } from './telegram-webhook-secret.js';

const KEY = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
const PROJECT = '3f2a6c1e-8d4b-4f7a-9c2e-1b5d7e9f0a13';
const BOT = '7000000123';

describe('TelegramWebhookSecrets', () => {
  const secrets = TelegramWebhookSecrets.of(new SecretBox(KEY))!;

  it('gives a token Telegram accepts as secret_token (1-256 of A-Za-z0-9_-)', () => {
    expect(secrets.tokenFor(PROJECT, BOT)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('is the same for every process with the same key, and differs with another key', () => {
    expect(TelegramWebhookSecrets.of(new SecretBox(Buffer.from(KEY)))!.tokenFor(PROJECT, BOT)).toBe(secrets.tokenFor(PROJECT, BOT));
    const other = Buffer.from(KEY);
    other[0] = 0xff;
    expect(TelegramWebhookSecrets.of(new SecretBox(other))!.tokenFor(PROJECT, BOT)).not.toBe(secrets.tokenFor(PROJECT, BOT));
  });

  it('differs per project and per bot, and ids cannot be shifted from one to the other', () => {
    const tokens = new Set([
      secrets.tokenFor(PROJECT, BOT),
      secrets.tokenFor(PROJECT, '7000000124'),
      secrets.tokenFor('3f2a6c1e-8d4b-4f7a-9c2e-1b5d7e9f0a14', BOT),
      secrets.tokenFor(`${PROJECT}7`, BOT.slice(1)),
    ]);
    expect(tokens.size).toBe(4);
  });

  it('verifies the bot’s own token only: not another bot’s, a prefix, a longer one, an empty or a missing one', () => {
    const token = secrets.tokenFor(PROJECT, BOT);
    expect(secrets.verify(PROJECT, BOT, token)).toBe(true);
    for (const wrong of [secrets.tokenFor(PROJECT, '7000000124'), token.slice(0, -1), `${token}x`, '', undefined]) {
      expect(secrets.verify(PROJECT, BOT, wrong), String(wrong)).toBe(false);
    }
  });

  it('is null without an instance key (no bot can be connected then)', () => {
    expect(TelegramWebhookSecrets.of(null)).toBeNull();
  });

  it('is no token of the secret box’s: the derived key is not the instance key', () => {
    const box = new SecretBox(KEY);
    expect(box.derive('telegram webhook secret token').equals(KEY)).toBe(false);
    expect(box.derive('a').equals(box.derive('b'))).toBe(false);
  });
});
