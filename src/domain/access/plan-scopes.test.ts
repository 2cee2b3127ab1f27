import { describe, expect, it } from 'vitest';
import { planScopeOf } from './plan-scopes.js';

describe('plan scopes of the outbox events', () => {
  it.each([
    ['membership.created', 'user'],
    ['membership.extended', 'user'],
    ['membership.expired', 'user'],
    ['membership.deleted', 'user'],
    ['user.banned', 'user'],
    ['user.unbanned', 'user'],
    ['membership.bulk-extended', 'project'],
    ['plan.updated', 'project'],
    ['plan.deleted', 'project'],
    ['target.updated', 'project'],
    ['target.removed', 'project'],
    ['plan.created', null],
    ['target.added', null],
    ['access.granted', null],
    ['webhook.delivery-failed', null],
    ['something.new', null],
    ['toString', null],
  ])('%s → %s', (type, scope) => {
    expect(planScopeOf(type)).toBe(scope);
  });
});
