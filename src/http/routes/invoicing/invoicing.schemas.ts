import Type from 'typebox';
import { COUNTRY_PATTERN, LIMITS, VAT_ID_PATTERN } from '../../../domain/invoicing/invoicing-rules.js';
import { Envelope, errorResponses, InstantString, UserId } from '../../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Text = (field: string, max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, 'x-message': `${field} must be 1 to ${max} characters of text (or null to remove it)`, ...(description ? { description } : {}) });

/** The billing address on the member's invoices (Stripe's customer address). */
export const InvoicingAddress = Type.Object(
  {
    line1: Text('address.line1', LIMITS.line),
    line2: Type.Optional(Nullable(Text('address.line2', LIMITS.line))),
    city: Text('address.city', LIMITS.city),
    postal_code: Type.Optional(Nullable(Text('address.postal_code', LIMITS.postal_code))),
    state: Type.Optional(Nullable(Text('address.state', LIMITS.state))),
    country: Type.String({ pattern: COUNTRY_PATTERN, 'x-message': 'address.country must be an ISO 3166-1 alpha-2 country code, upper-case (e.g. DE)', examples: ['DE'] }),
  },
);

const fields = {
  name: Text('name', LIMITS.name, "The person's name on invoices"),
  company: Text('company', LIMITS.company, 'The company invoices are made out to (Stripe: business_name)'),
  vat_id: Type.String({
    pattern: VAT_ID_PATTERN,
    'x-message': 'vat_id must be a VAT number with its country prefix, upper-case, without spaces (e.g. DE123456789)',
    description: 'Shown on Stripe invoices as the custom field "VAT ID"',
    examples: ['DE123456789'],
  }),
};

/** A member's invoicing details as the API shows them (docs/portal.md, "Invoicing details"). */
export const Invoicing = Type.Object({
  user_id: Type.String(),
  name: Nullable(Type.String()),
  company: Nullable(Type.String()),
  address: Nullable(
    Type.Object({
      line1: Type.String(),
      line2: Nullable(Type.String()),
      city: Type.String(),
      postal_code: Nullable(Type.String()),
      state: Nullable(Type.String()),
      country: Type.String(),
    }),
  ),
  vat_id: Nullable(Type.String()),
  updated_at: Nullable(InstantString),
});

const Params = Type.Object({ project_id: Type.String(), user_id: UserId });

export const getInvoicingSchema = {
  summary: "A member's invoicing details (name, company, address, VAT id)",
  description: 'All null when never given. Passed to Stripe as the customer\'s billing details when the member opens Stripe\'s billing page from the portal (docs/portal.md).',
  params: Params,
  response: { 200: Envelope(Invoicing), ...errorResponses() },
};

export const updateInvoicingSchema = {
  summary: "Change a member's invoicing details (only the fields sent; null removes one)",
  params: Params,
  body: Type.Object(
    {
      name: Type.Optional(Nullable(fields.name)),
      company: Type.Optional(Nullable(fields.company)),
      address: Type.Optional(Nullable(InvoicingAddress)),
      vat_id: Type.Optional(Nullable(fields.vat_id)),
    },
    { minProperties: 1, 'x-message': 'send at least one of name, company, address, vat_id' },
  ),
  response: { 200: Envelope(Invoicing), ...errorResponses(422) },
};
