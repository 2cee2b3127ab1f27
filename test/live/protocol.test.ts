import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANNELS } from '../../src/live/channels.js';
import { createLiveHarness, type LiveHarness } from './live-harness.js';

/**
 * The protocol: `ready`, subscribe / unsubscribe / ping and their answers,
 * errors that leave the connection up, the per-connection action limit, the 4 KB packet cap and
 * the per-project connection cap.
 */

const ACTIONS_PER_MINUTE = 12;
const CAP = 3;

let lh: LiveHarness;
beforeAll(async () => {
  lh = await createLiveHarness({
    env: { TENURE_LIVE_ACTIONS_PER_MINUTE: String(ACTIONS_PER_MINUTE), TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT: String(CAP) },
  });
});
afterAll(() => lh.close());

const connected = async () => lh.connect(await lh.tenant());

describe('actions', () => {
  it.each(CHANNELS)('subscribes to and unsubscribes from %s', async (channel) => {
    const c = await connected();
    expect(await c.act({ action: 'subscribe', channel }, 'subscribed')).toStrictEqual({ type: 'subscribed', channel });
    expect(await c.act({ action: 'unsubscribe', channel }, 'unsubscribed')).toStrictEqual({ type: 'unsubscribed', channel });
  });

  it('answers a repeated subscribe or an unsubscribe of a channel never subscribed the same way', async () => {
    const c = await connected();
    expect(await c.act({ action: 'subscribe', channel: 'plans' }, 'subscribed')).toStrictEqual({ type: 'subscribed', channel: 'plans' });
    expect(await c.act({ action: 'subscribe', channel: 'plans' }, 'subscribed')).toStrictEqual({ type: 'subscribed', channel: 'plans' });
    expect(await c.act({ action: 'unsubscribe', channel: 'targets' }, 'unsubscribed')).toStrictEqual({ type: 'unsubscribed', channel: 'targets' });
  });

  it('answers ping with pong', async () => {
    const c = await connected();
    expect(await c.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
  });
});

describe('errors keep the connection up', () => {
  it.each([
    ['an unknown action', { action: 'publish', channel: 'memberships' }, 'UNKNOWN_ACTION', /^Unknown action "publish"; actions: subscribe, unsubscribe, ping$/],
    ['a missing action', { channel: 'memberships' }, 'UNKNOWN_ACTION', /^Unknown action null/],
    ['an unknown channel', { action: 'subscribe', channel: 'payment-requests' }, 'UNKNOWN_CHANNEL', /^Unknown channel \("payment-requests"\); channels: memberships, plans, targets, webhook-deliveries, access, payments$/],
    ['a missing channel', { action: 'subscribe' }, 'UNKNOWN_CHANNEL', /^Unknown channel \(missing\)/],
    ['a channel that is not a string', { action: 'unsubscribe', channel: ['memberships'] }, 'UNKNOWN_CHANNEL', /^Unknown channel \(missing\)/],
    ['a string message', 'subscribe memberships', 'INVALID_MESSAGE', /must be an object/],
    ['an array message', [{ action: 'ping' }], 'INVALID_MESSAGE', /must be an object/],
    ['a null message', null, 'INVALID_MESSAGE', /must be an object/],
    ['an `after` that is not an event id', { action: 'subscribe', channel: 'memberships', after: 'yesterday' }, 'VALIDATION_ERROR', /^after must be the event_id/],
  ])('answers %s with an error message', async (_what, payload, error_code, message) => {
    const c = await connected();
    const answer = await c.act(payload, 'error');
    expect(answer).toMatchObject({ type: 'error', error_code, message: expect.stringMatching(message) });
    expect(c.socket.connected).toBe(true);
    expect(await c.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
  });

  it('names the channel of a channel error', async () => {
    const c = await connected();
    expect(await c.act({ action: 'subscribe', channel: 'nope' }, 'error')).toStrictEqual({
      type: 'error',
      error_code: 'UNKNOWN_CHANNEL',
      message: 'Unknown channel ("nope"); channels: memberships, plans, targets, webhook-deliveries, access, payments',
      channel: 'nope',
    });
  });

  it('answers an event other than `message` with UNKNOWN_ACTION', async () => {
    const c = await connected();
    c.socket.emit('subscribe', { channel: 'memberships' });
    expect(await c.message('error')).toStrictEqual({
      type: 'error',
      error_code: 'UNKNOWN_ACTION',
      message: 'Send actions on the "message" event (got "subscribe")',
    });
    expect(await c.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
  });
});

describe('limits', () => {
  it('limits actions per connection, answering the excess with RATE_LIMIT_EXCEEDED, and not other connections', async () => {
    const t = await lh.tenant();
    const c = await lh.connect(t);
    for (let i = 0; i < ACTIONS_PER_MINUTE; i++) expect(await c.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
    const refused = await c.act({ action: 'ping' }, 'error');
    expect(refused).toStrictEqual({
      type: 'error',
      error_code: 'RATE_LIMIT_EXCEEDED',
      message: expect.stringMatching(/^Too many actions on this connection\. Please retry after \d+ seconds\.$/),
      retry_after: expect.any(Number),
    });
    expect(refused.retry_after).toBeGreaterThanOrEqual(1);
    expect(refused.retry_after).toBeLessThanOrEqual(60);
    // Refused actions are not carried out: no pong beyond the limit.
    expect(c.messages().filter((m) => m.type === 'pong')).toHaveLength(ACTIONS_PER_MINUTE);
    expect(c.socket.connected).toBe(true);
    // Another connection of the same project has its own allowance.
    const other = await lh.connect(t);
    expect(await other.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
  });

  it('closes a connection that sends a packet over 4 KB, and serves one just under it', async () => {
    const t = await lh.tenant();
    const small = await lh.connect(t);
    // The packet is `42/v2/live-updates,["message",{...}]`: about 60 bytes around the padding.
    expect(await small.act({ action: 'ping', padding: 'x'.repeat(3_900) }, 'pong')).toStrictEqual({ type: 'pong' });
    const big = await lh.connect(t);
    big.send({ action: 'ping', padding: 'x'.repeat(4_200) });
    await big.disconnected();
    expect(big.messages().filter((m) => m.type === 'pong')).toStrictEqual([]);
    expect(await small.act({ action: 'ping' }, 'pong')).toStrictEqual({ type: 'pong' });
  });

  it('refuses an over-4 KB packet over long-polling too', async () => {
    const t = await lh.tenant();
    const c = lh.client({ token: t.key, project_id: t.projectId }, { transports: ['polling'] });
    await c.ready();
    c.send({ action: 'ping', padding: 'x'.repeat(4_200) });
    await c.disconnected();
    expect(c.messages().filter((m) => m.type === 'pong')).toStrictEqual([]);
  });

  it(`caps connections per project at ${CAP}; a closed one frees its place; other projects are not affected`, async () => {
    const t = await lh.tenant();
    const open = await Promise.all(Array.from({ length: CAP }, () => lh.connect(t)));
    const refused = lh.client({ token: t.key, project_id: t.projectId });
    expect(await refused.refusal()).toStrictEqual({
      error_code: 'CONNECTION_LIMIT_REACHED',
      message: `This project already has ${CAP} live-update connections (TENURE_LIVE_MAX_CONNECTIONS_PER_PROJECT)`,
    });
    // Another project connects as usual.
    await connected();
    open[0]!.socket.disconnect();
    // The server frees the place when it sees the disconnect (not at once): try until admitted.
    let admitted = null;
    for (let attempt = 0; attempt < 50 && !admitted; attempt++) {
      const c = lh.client({ token: t.key, project_id: t.projectId });
      await c.until(() => c.socket.connected || c.connectError, 'an answer to the handshake');
      if (c.socket.connected) admitted = c;
    }
    expect(admitted, 'a place was freed').not.toBeNull();
    expect(lh.live.connectionCount()).toBeGreaterThanOrEqual(CAP);
  });
});
