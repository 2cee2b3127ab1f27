import { describe, expect, it } from 'vitest';
import { contrast, DEFAULT_ACCENT, paletteOf } from './branding.js';

describe('branding palette', () => {
  it('measures contrast as WCAG does', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  it('keeps tenure’s own colours without a setting', () => {
    expect(paletteOf(null)).toStrictEqual({ accent: DEFAULT_ACCENT, onAccent: '#ffffff', link: DEFAULT_ACCENT });
  });

  it.each(['#ffff00', '#00ff00', '#777777', '#3a36c9', '#000000', '#ffffff', '#ff6600', '#0099ff', '#808080'])(
    'reaches AA for the button label and links on %s',
    (accent) => {
      const p = paletteOf(accent);
      expect(contrast(p.accent, p.onAccent)).toBeGreaterThanOrEqual(4.5);
      expect(contrast(p.link, '#ffffff')).toBeGreaterThanOrEqual(4.5);
      expect(p.accent).toBe(accent);
    },
  );

  it('draws dark text on a light accent and falls back to the default link colour', () => {
    expect(paletteOf('#ffff00')).toStrictEqual({ accent: '#ffff00', onAccent: '#000000', link: DEFAULT_ACCENT });
  });
});
