import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { csvLines, parseLine } from './csv-lines.js';

describe('the import CSV reader', () => {
  it('splits plain and quoted fields, trimmed, a doubled quote kept once', () => {
    expect(parseLine(' 1 , 2 ')).toStrictEqual({ fields: ['1', '2'] });
    expect(parseLine('1,"a, ""b""",')).toStrictEqual({ fields: ['1', 'a, "b"', ''] });
    expect(parseLine('"1" ,2')).toStrictEqual({ fields: ['1', '2'] });
  });

  it('says why a line is not readable, and where', () => {
    expect(parseLine('"1,2')).toStrictEqual({ error: 'unclosed quote (opened at column 1; a quoted field must end on its line)' });
    expect(parseLine('"1"x,2')).toStrictEqual({ error: 'unexpected character after a closing quote at column 4' });
    expect(parseLine('1,a"b')).toStrictEqual({ error: 'quote inside an unquoted field at column 4' });
  });

  it('numbers every line, skips blank ones, drops a BOM, and reads lines split across chunks', async () => {
    const chunks = [Buffer.from('\uFEFFuser_id,end'), Buffer.from('_date\r\n\n"1,2\n3,'), Buffer.from([0xe2, 0x82]), Buffer.from([0xac, 0x0a]), Buffer.from('4,5')];
    const lines = [];
    for await (const l of csvLines(Readable.from(chunks))) lines.push([l.line, l.fields ?? l.error]);
    expect(lines).toStrictEqual([
      [1, ['user_id', 'end_date']],
      [3, 'unclosed quote (opened at column 1; a quoted field must end on its line)'],
      [4, ['3', '€']],
      [5, ['4', '5']],
    ]);
  });
});
