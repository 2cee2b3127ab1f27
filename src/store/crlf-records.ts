import { Transform } from 'node:stream';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * CSV as COPY writes it (records ending in LF) turned into RFC 4180's CRLF records, chunk by chunk
 * whatever the chunks' boundaries. A LF is a record's end when it lies outside quotes: a quoted
 * field holds its quotes doubled, so counting every quote since the start tells inside from
 * outside. A line break inside a quoted field (a name with a newline) is left as it is, as the
 * batch path writes it. The scan jumps from quote to LF with indexOf, so a chunk costs about a
 * memchr over it and one copy.
 */
export function crlfRecords(): Transform {
  let quoted = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const ends: number[] = [];
      let quote = chunk.indexOf(QUOTE);
      let lf = chunk.indexOf(LF);
      while (lf !== -1) {
        if (quote !== -1 && quote < lf) {
          quoted = !quoted;
          quote = chunk.indexOf(QUOTE, quote + 1);
          continue;
        }
        if (!quoted) ends.push(lf);
        lf = chunk.indexOf(LF, lf + 1);
      }
      // Quotes after the last LF still count for the next chunk.
      for (; quote !== -1; quote = chunk.indexOf(QUOTE, quote + 1)) quoted = !quoted;
      if (ends.length === 0) {
        done(null, chunk);
        return;
      }
      const out = Buffer.allocUnsafe(chunk.length + ends.length);
      let from = 0;
      let at = 0;
      for (const end of ends) {
        at += chunk.copy(out, at, from, end);
        out[at++] = CR;
        from = end;
      }
      chunk.copy(out, at, from);
      done(null, out);
    },
  });
}
