import { describe, expect, it } from 'vitest';
import { sameText } from './same-text.js';

describe('sameText', () => {
  it('is true for the same text only: another character, length or encoding of it is not', () => {
    expect(sameText('a1b2c3', 'a1b2c3')).toBe(true);
    expect(sameText('', '')).toBe(true);
    expect(sameText('a1b2c3', 'a1b2c4')).toBe(false);
    expect(sameText('a1b2c3', 'a1b2c')).toBe(false);
    expect(sameText('a1b2c3', '')).toBe(false);
    // Compared as UTF-8 bytes: the same letters in another form differ.
    expect(sameText('é', 'e\u0301')).toBe(false);
    expect(sameText('Straße', 'Straße')).toBe(true);
  });
});
