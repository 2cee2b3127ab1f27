import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { crlfRecords } from './crlf-records.js';

/** COPY's LF-ended CSV, cut into chunks at every possible place, read back through crlfRecords. */
async function converted(input: string, cut: number[]): Promise<string> {
  const bytes = Buffer.from(input);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const at of [...cut, bytes.length]) {
    chunks.push(bytes.subarray(from, at));
    from = at;
  }
  return text(Readable.from(chunks).pipe(crlfRecords()));
}

describe('crlfRecords', () => {
  const copy = 'a,b\n1,"two\nlines"\n"say ""hi""",x\n"crlf\r\nend",\n,"q""\n"""\n';
  const rfc = 'a,b\r\n1,"two\nlines"\r\n"say ""hi""",x\r\n"crlf\r\nend",\r\n,"q""\n"""\r\n';

  it('ends records in CRLF and leaves line breaks inside quoted fields alone', async () => {
    expect(await converted(copy, [])).toBe(rfc);
  });

  it('whatever the chunks’ boundaries: every cut in two and in three', async () => {
    const n = Buffer.byteLength(copy);
    for (let i = 0; i <= n; i++) {
      expect(await converted(copy, [i]), `cut at ${i}`).toBe(rfc);
      for (let j = i; j <= n; j += 3) expect(await converted(copy, [i, j]), `cuts at ${i}, ${j}`).toBe(rfc);
    }
  });

  it('passes a chunk without a record end on as it is, and non-ASCII text untouched', async () => {
    expect(await converted('Zoë 🎉,"x\ny"\n', [3, 9])).toBe('Zoë 🎉,"x\ny"\r\n');
    expect(await converted('', [])).toBe('');
  });
});
