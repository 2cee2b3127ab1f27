import Type from 'typebox';
import { errorResponses, ProjectParams } from '../../schemas.js';
import { membershipFilters } from '../memberships/memberships.schemas.js';
import { paymentFilters } from '../payments/payments.schemas.js';
import { EXPORT_FORMATS } from './export-stream.js';

const format = Type.Optional(
  Type.Enum([...EXPORT_FORMATS], {
    'x-message': `format must be one of: ${EXPORT_FORMATS.join(', ')}`,
    default: 'csv',
    description: 'csv: a header row, then one row per item (RFC 4180, UTF-8, an empty field for null). ndjson: one JSON object per line, as the list shows each item',
  }),
);

/** The file, whichever format; the document names both media types. */
const file = (what: string) => ({
  description: `The whole export, streamed: ${what}. A failure after the first bytes cuts the response short (no final chunk), so a file that arrives complete is complete`,
  headers: {
    'Content-Disposition': { type: 'string', description: 'attachment; filename="memberships-{project_id}.csv" (or payments-…, .ndjson)' },
  },
  content: {
    'text/csv': { schema: Type.String({ description: 'A header row, then one row per item' }) },
    'application/x-ndjson': { schema: Type.String({ description: 'One JSON object per line' }) },
  },
});

export const exportMembershipsSchema = {
  summary: 'Export every membership the filters match, as one CSV or NDJSON file',
  description: 'docs/memberships.md, "Export". The filters and order of the list; no paging. An unknown parameter is a 422.',
  params: ProjectParams,
  querystring: Type.Object({ format, ...membershipFilters() }),
  response: { 200: file('one line per membership, in the list\'s order'), ...errorResponses(422) },
};

export const exportPaymentsSchema = {
  summary: 'Export every payment the filters match, newest first, as one CSV or NDJSON file',
  description: 'docs/memberships.md, "Export". The filters of the payments list; no paging. An unknown parameter is a 422.',
  params: ProjectParams,
  querystring: Type.Object({ format, ...paymentFilters() }),
  response: { 200: file('one line per payment, newest first'), ...errorResponses(422) },
};
