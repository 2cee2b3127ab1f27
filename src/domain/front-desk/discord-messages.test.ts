import { describe, expect, it } from 'vitest';
import { EPHEMERAL, membershipsMessage, planSummary, plansMessage, type PlanOffer } from './discord-messages.js';

const offer = (i: number): PlanOffer => ({ planId: `p${i}`, name: `Plan ${i}`, priceFormatted: '$5.00', duration: '1 month', recurring: false, grants: ['VIP'] });

describe('the replies', () => {
  it('plans: at most 25 buttons, 5 a row, ephemeral; none says what to do', () => {
    const message = plansMessage(Array.from({ length: 30 }, (_, i) => offer(i)));
    expect(message.flags).toBe(EPHEMERAL);
    expect(message.components).toHaveLength(5);
    expect(message.components!.every((r) => r.components.length === 5)).toBe(true);
    expect(plansMessage([]).content).toMatch(/nothing to subscribe to/);
  });

  it('a summary carries the pay link as a link button, ephemeral', () => {
    const message = planSummary({ ...offer(1), recurring: true }, 'https://tenure.example/pay/abc');
    expect(message.flags).toBe(EPHEMERAL);
    expect(message.content).toContain('renews every 1 month');
    expect(message.components![0]!.components[0]).toStrictEqual({ type: 2, style: 5, label: 'Pay now', url: 'https://tenure.example/pay/abc' });
  });

  it('memberships: active with its renewal, expired with what to do', () => {
    const end = new Date('2030-01-01T00:00:00.000Z');
    const text = membershipsMessage([
      { planName: 'Gold', status: 'active', endDate: end, subscriptionStatus: 'active' },
      { planName: null, status: 'expired', endDate: end, subscriptionStatus: null },
    ]).content;
    expect(text).toBe('**Gold**: active until <t:1893456000:D>, renews automatically.\n**Membership**: ended <t:1893456000:D>. Use /subscribe to join again.');
    const withPortal = membershipsMessage([{ planName: 'Gold', status: 'active', endDate: end, subscriptionStatus: null }], 'https://t.example/portal/x');
    expect(withPortal.flags).toBe(EPHEMERAL);
    expect(withPortal.components![0]!.components[0]).toStrictEqual({ type: 2, style: 5, label: 'My membership page', url: 'https://t.example/portal/x' });
  });
});
