import { fail, ok, type Result } from '../errors.js';

/**
 * A member's invoicing details (docs/portal.md, "Invoicing details"): who the invoices are made
 * out to. The API's PATCH and the portal's form are checked by these same rules, so a value the
 * one refuses the other refuses too; Stripe's own limits bound them (a business name of 150
 * characters, a custom field's value of 140).
 */

export interface InvoicingAddress {
  line1: string;
  line2: string | null;
  city: string;
  postal_code: string | null;
  state: string | null;
  /** ISO 3166-1 alpha-2, upper-case. */
  country: string;
}

export interface InvoicingDetails {
  name: string | null;
  company: string | null;
  address: InvoicingAddress | null;
  vat_id: string | null;
}

export interface InvoicingView extends InvoicingDetails {
  user_id: string;
  /** When they were last changed; null: never given. */
  updated_at: string | null;
}

/** An address as given: its optional parts may be left out. */
export type InvoicingAddressInput = Omit<InvoicingAddress, 'line2' | 'postal_code' | 'state'> & Partial<Pick<InvoicingAddress, 'line2' | 'postal_code' | 'state'>>;

/** A change: only the fields named; null clears one. */
export type InvoicingPatch = Partial<Omit<InvoicingDetails, 'address'>> & { address?: InvoicingAddressInput | null };

export const INVOICING_FIELDS = ['name', 'company', 'address', 'vat_id'] as const;

export const LIMITS = { name: 200, company: 150, line: 200, city: 100, postal_code: 20, state: 100 } as const;
export const COUNTRY_PATTERN = '^[A-Z]{2}$';
/** A country prefix, then 2 to 13 letters, digits, `+`, `*` or `.` (every EU, UK, Swiss and Norwegian VAT number fits). */
export const VAT_ID_PATTERN = '^[A-Z]{2}[0-9A-Z+*.]{2,13}$';
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

export const EMPTY_DETAILS: InvoicingDetails = { name: null, company: null, address: null, vat_id: null };

/** The details after `patch`, or the first reason it is refused (a 422 naming the field). */
export function applyPatch(current: InvoicingDetails, patch: InvoicingPatch): Result<InvoicingDetails> {
  if (INVOICING_FIELDS.every((f) => patch[f] === undefined)) return fail('VALIDATION_ERROR', 'send at least one of name, company, address, vat_id');
  const next: InvoicingDetails = { ...current };
  if (patch.name !== undefined) {
    const bad = textProblem('name', patch.name, LIMITS.name);
    if (bad) return fail('VALIDATION_ERROR', bad);
    next.name = patch.name;
  }
  if (patch.company !== undefined) {
    const bad = textProblem('company', patch.company, LIMITS.company);
    if (bad) return fail('VALIDATION_ERROR', bad);
    next.company = patch.company;
  }
  if (patch.vat_id !== undefined) {
    if (patch.vat_id !== null && !new RegExp(VAT_ID_PATTERN).test(patch.vat_id)) {
      return fail('VALIDATION_ERROR', 'vat_id must be a VAT number with its country prefix, upper-case, without spaces (e.g. DE123456789)');
    }
    next.vat_id = patch.vat_id;
  }
  if (patch.address !== undefined) {
    // Only the address's own fields are kept (a field the API does not know is ignored, as elsewhere).
    const given = patch.address;
    const a =
      given === null
        ? null
        : { line1: given.line1, line2: given.line2 ?? null, city: given.city, postal_code: given.postal_code ?? null, state: given.state ?? null, country: given.country };
    const bad = a === null ? null : addressProblem(a);
    if (bad) return fail('VALIDATION_ERROR', bad);
    next.address = a;
  }
  return ok(next);
}

function textProblem(field: string, value: string | null, max: number): string | null {
  if (value === null) return null;
  if (value.trim() === '' || value.length > max || CONTROL.test(value)) return `${field} must be 1 to ${max} characters of text (or null to remove it)`;
  return null;
}

function addressProblem(a: InvoicingAddress): string | null {
  const required: [keyof InvoicingAddress, number][] = [
    ['line1', LIMITS.line],
    ['city', LIMITS.city],
  ];
  for (const [field, max] of required) {
    const bad = textProblem(`address.${field}`, a[field], max);
    if (bad || a[field] === null) return bad ?? `address.${field} is required`;
  }
  const optional: [keyof InvoicingAddress, number][] = [
    ['line2', LIMITS.line],
    ['postal_code', LIMITS.postal_code],
    ['state', LIMITS.state],
  ];
  for (const [field, max] of optional) {
    const bad = textProblem(`address.${field}`, a[field], max);
    if (bad) return bad;
  }
  if (!new RegExp(COUNTRY_PATTERN).test(a.country)) return 'address.country must be an ISO 3166-1 alpha-2 country code, upper-case (e.g. DE)';
  return null;
}

/**
 * What a member typed in the portal's form, as a patch: blanks are "none", the VAT number is
 * upper-cased and its spaces, dots and dashes dropped, the country upper-cased; an address is
 * given when any of its fields is.
 */
export function patchFromForm(form: Record<string, unknown>): InvoicingPatch {
  const text = (key: string): string | null => {
    const v = form[key];
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
  };
  const vat = text('vat_id');
  const address = {
    line1: text('line1'),
    line2: text('line2'),
    city: text('city'),
    postal_code: text('postal_code'),
    state: text('state'),
    country: text('country')?.toUpperCase() ?? null,
  };
  const anyAddress = Object.values(address).some((v) => v !== null);
  return {
    name: text('name'),
    company: text('company'),
    vat_id: vat === null ? null : vat.toUpperCase().replace(/[\s.-]/g, ''),
    // Missing required parts are refused by the rules, naming the field.
    address: anyAddress ? { ...address, line1: address.line1 ?? '', city: address.city ?? '', country: address.country ?? '' } : null,
  };
}
