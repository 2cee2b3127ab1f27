import { describe, expect, it } from 'vitest';
import { isActiveAt, statusAt } from './active.js';

const at = new Date('2030-01-01T00:00:00.000Z');
const ms = (d: number) => new Date(at.getTime() + d);

describe('a membership is active at an instant', () => {
  it('while its end date is ahead of it; expired from the end date itself on', () => {
    expect([isActiveAt(ms(1), at), isActiveAt(ms(0), at), isActiveAt(ms(-1), at)]).toStrictEqual([true, false, false]);
    expect([statusAt(ms(1), at), statusAt(ms(0), at)]).toStrictEqual(['active', 'expired']);
  });
});
