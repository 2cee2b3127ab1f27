import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { EXPORT_FORMATS, type ExportFormat } from '../../../domain/exports/export-format.js';
import type { ExportBody } from '../../../domain/exports/exports.service.js';

/**
 * The body of an export (docs/memberships.md, "Export"): CSV or NDJSON, the database's bytes passed
 * on, or written batch by batch, as the client reads, so memory stays at about a batch (or a few
 * socket buffers) however many rows there are.
 */

export { EXPORT_FORMATS, type ExportFormat };

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

type Cell = string | number | boolean | null | undefined;

/** A CSV file's columns: the header's names and each row's cells in the same order. */
export interface CsvColumns<T> {
  names: readonly string[];
  cells(row: T): Cell[];
}

/**
 * One CSV field as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break, its
 * quotes doubled. An empty field stands for null. No CSV writer is among the dependencies (only
 * csv-parse, which the tests read these files back with), and these few lines are all it takes.
 * Values are written as stored: a name starting with `=` is not altered, so the file reads back to
 * exactly the list's data; spreadsheets should open it as text (docs/memberships.md).
 */
export function csvField(value: Cell): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const csvLine = (cells: readonly Cell[]) => `${cells.map(csvField).join(',')}\r\n`;

/** The whole export as text, one chunk at a time; the first is read by the caller. */
async function* chunks<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    for (let chunk = first; !chunk.done; chunk = await rest.next()) yield chunk.value;
  } finally {
    // The client went away or the statement failed: stop it (a COPY's connection is closed).
    await rest.return?.();
  }
}

/** The lines of the whole export, one string per batch; the first batch is read by the caller. */
async function* lines<T>(first: IteratorResult<T[]>, rest: AsyncIterator<T[]>, header: string, line: (row: T) => string): AsyncGenerator<string> {
  try {
    let text = header;
    for (let batch = first; !batch.done; batch = await rest.next()) {
      for (const row of batch.value) text += line(row);
      yield text;
      text = '';
    }
    if (text !== '') yield text;
  } finally {
    // The client went away or a batch failed: stop reading.
    await rest.return?.();
  }
}

/**
 * A route's serializer of one item (fast-json-stringify, as its list's response uses): the item's
 * schema fields in their order, nothing else. Fastify types its input as a plain record.
 */
export function itemSerializer<T extends object>(reply: FastifyReply, schema: object): (row: T) => string {
  const serialize = reply.compileSerializationSchema(schema as Record<string, unknown>);
  return (row) => serialize(row as Record<string, unknown>);
}

export interface ExportOptions<T> {
  format: ExportFormat;
  /** The file's name without its extension. */
  name: string;
  body: ExportBody<T>;
  csv: CsvColumns<T>;
  /** One NDJSON line without its newline: the list's serializer of an item. */
  json(row: T): string;
}

/** The response body: the database's bytes, or the rows written as `format`'s lines. */
async function bodyOf<T>(options: ExportOptions<T>): Promise<Readable> {
  const { format, body, csv } = options;
  if ('bytes' in body) {
    const rest = body.bytes[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    const first = await rest.next();
    return Readable.from(chunks(first, rest), { objectMode: false });
  }
  const first = await body.rows.next();
  const header = format === 'csv' ? csvLine(csv.names) : '';
  const line = format === 'csv' ? (row: T) => csvLine(csv.cells(row)) : (row: T) => `${options.json(row)}\n`;
  // objectMode off: the buffer is counted in bytes, so no further batch is read while one waits.
  return Readable.from(lines(first, body.rows, header, line), { objectMode: false, highWaterMark: 64 * 1024 });
}

/**
 * Sends an export. Its first chunk (or batch) is read before anything is sent, so a failure then
 * (the database unreachable, the statement refused) is an ordinary error response. A failure after
 * the headers went out cannot change the status any more: the stream is destroyed, Fastify
 * destroys the connection, and the client sees a response cut short (no final chunk), never a
 * file that looks complete.
 */
export async function sendExport<T>(reply: FastifyReply, options: ExportOptions<T>): Promise<FastifyReply> {
  const { format } = options;
  const body = await bodyOf(options);
  // The client went away while the first chunk was read: stop here (a COPY's connection is closed).
  if (reply.raw.destroyed) body.destroy();
  return reply
    .code(200)
    .header('content-type', CONTENT_TYPES[format])
    .header('content-disposition', `attachment; filename="${options.name}.${format}"`)
    .header('cache-control', 'no-store')
    .send(body);
}
