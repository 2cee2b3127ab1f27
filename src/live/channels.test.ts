import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../domain/events.js';
import { CHANNELS, channelOf, isChannel, typesOf } from './channels.js';

describe('live-update channels', () => {
  it('puts every catalogued event type but webhook.test on exactly one channel', () => {
    const placed = CHANNELS.flatMap((c) => typesOf(c));
    expect(new Set(placed).size).toBe(placed.length);
    expect([...placed].sort()).toStrictEqual(EVENT_TYPES.filter((t) => t !== 'webhook.test').sort());
    expect(channelOf('webhook.test')).toBeNull();
  });

  it.each([
    ['membership.bulk-extended', 'memberships'],
    ['user.banned', 'memberships'],
    ['user.unbanned', 'memberships'],
    ['plan.deleted', 'plans'],
    ['target.removed', 'targets'],
    ['webhook.delivery-failed', 'webhook-deliveries'],
    ['webhook.endpoint-disabled', 'webhook-deliveries'],
    ['access.granted', 'access'],
    ['access.revoked', 'access'],
    ['access.failed', 'access'],
    ['payment.succeeded', 'payments'],
    ['payment.refunded', 'payments'],
  ])('carries %s on %s', (type, channel) => {
    expect(channelOf(type)).toBe(channel);
  });

  it('knows only its six channel names', () => {
    expect(CHANNELS).toStrictEqual(['memberships', 'plans', 'targets', 'webhook-deliveries', 'access', 'payments']);
    for (const bad of ['Memberships', 'membership', '', 'payment-requests', null, 1, ['plans']]) expect(isChannel(bad)).toBe(false);
  });
});
