import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/**
 * The import's CSV reader: one record a physical line, so a broken record costs exactly its own
 * line. A field may be quoted ("…", a quote inside written twice) to hold a comma, but not a line
 * break: nothing the import reads (ids, dates, names) holds one, and a quote left open would
 * otherwise swallow the rest of the file into one field (what a general CSV parser does, and
 * where its error recovery can only resume at the end). A UTF-8 byte order mark (a file saved by
 * Excel) is dropped; `\r\n` and `\n` both end a line; blank lines are skipped.
 */

export type CsvLine =
  | { line: number; text: string; fields: string[]; error: null }
  | { line: number; text: string; fields: null; error: string };

/** The fields of one line, trimmed, or why it cannot be read. */
export function parseLine(text: string): { fields: string[] } | { error: string } {
  if (!text.includes('"')) return { fields: text.split(',').map((f) => f.trim()) };
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (text[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const close = text.indexOf('"', j);
        if (close < 0) return { error: `unclosed quote (opened at column ${i + 1}; a quoted field must end on its line)` };
        value += text.slice(j, close);
        if (text[close + 1] === '"') {
          value += '"';
          j = close + 2;
          continue;
        }
        i = close + 1;
        break;
      }
      while (text[i] === ' ' || text[i] === '\t') i++;
      if (i < text.length && text[i] !== ',') return { error: `unexpected character after a closing quote at column ${i + 1}` };
      fields.push(value);
    } else {
      const comma = text.indexOf(',', i);
      const raw = comma < 0 ? text.slice(i) : text.slice(i, comma);
      if (raw.includes('"')) return { error: `quote inside an unquoted field at column ${i + raw.indexOf('"') + 1}` };
      fields.push(raw.trim());
      i = comma < 0 ? text.length : comma;
    }
    if (i >= text.length) return { fields };
    i++; // the comma
    if (i === text.length) {
      fields.push('');
      return { fields };
    }
  }
}

/** The input's non-blank lines, each with its line number (1-based, blank lines counted) and its fields. */
export async function* csvLines(input: Readable): AsyncGenerator<CsvLine> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let line = 0;
  let first = true;
  const one = (raw: string): CsvLine | null => {
    line++;
    let text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (first) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text.trim() === '') return null;
    const parsed = parseLine(text);
    return 'error' in parsed ? { line, text, fields: null, error: parsed.error } : { line, text, fields: parsed.fields, error: null };
  };
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      const record = one(text.slice(start, end));
      start = end + 1;
      if (record) yield record;
    }
    rest = text.slice(start);
  }
  rest += decoder.end();
  if (rest !== '') {
    const record = one(rest);
    if (record) yield record;
  }
}
