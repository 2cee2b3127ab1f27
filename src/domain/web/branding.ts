/**
 * The public pages' colours from the project's `page_accent_color` (docs/web.md, "Branding"). Any
 * colour is accepted; what is drawn on it is chosen here so that WCAG 2.1 AA contrast holds
 * (4.5:1 for text): the button's label is white or black, whichever contrasts more (one of the
 * two always reaches 4.5:1), and links, drawn on white, take the accent only when it reaches 4.5:1
 * on white, else tenure's own link colour.
 */

export const DEFAULT_ACCENT = '#3a36c9';
/** Black, not the page's ink: with white, one of the two always reaches 4.5:1 on any colour. */
const BLACK = '#000000';
const WHITE = '#ffffff';
const AA_TEXT = 4.5;

export interface Palette {
  /** The buttons' background. */
  accent: string;
  /** The buttons' label, on `accent`. */
  onAccent: string;
  /** Links, on the white card. */
  link: string;
}

/** WCAG 2.1 relative luminance of `#rrggbb`. */
export function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG 2.1 contrast ratio of two `#rrggbb` colours, from 1 to 21. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

export function paletteOf(accentSetting: string | null): Palette {
  const accent = accentSetting ?? DEFAULT_ACCENT;
  const onAccent = contrast(accent, WHITE) >= contrast(accent, BLACK) ? WHITE : BLACK;
  return { accent, onAccent, link: contrast(accent, WHITE) >= AA_TEXT ? accent : DEFAULT_ACCENT };
}
