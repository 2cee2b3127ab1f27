import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ExportsService } from '../../../domain/exports/exports.service.js';
import type { MembershipView } from '../../../domain/memberships/membership.view.js';
import type { PaymentView } from '../../../domain/payments/payment.view.js';
import { membershipFilterOf } from '../memberships/memberships.routes.js';
import { Membership } from '../memberships/memberships.schemas.js';
import { paymentFilterOf } from '../payments/payments.routes.js';
import { Payment } from '../payments/payments.schemas.js';
import { itemSerializer, sendExport, type CsvColumns } from './export-stream.js';
import { exportMembershipsSchema, exportPaymentsSchema } from './exports.schemas.js';

/** A membership as a CSV row: the list's fields, `user_name` as its two parts. */
const MEMBERSHIP_CSV: CsvColumns<MembershipView> = {
  names: [
    'membership_id', 'user_id', 'plan_id', 'membership_start_date', 'membership_end_date', 'user_first_name', 'user_username',
    'plan_name', 'plan_duration', 'subscription_id', 'subscription_status', 'status', 'trial_ends_at', 'in_trial',
  ],
  cells: (m) => [
    m.membership_id, m.user_id, m.plan_id, m.membership_start_date, m.membership_end_date, m.user_name?.first_name, m.user_name?.username,
    m.plan_name, m.plan_duration, m.subscription_id, m.subscription_status, m.status, m.trial_ends_at, m.in_trial,
  ],
};

const PAYMENT_CSV: CsvColumns<PaymentView> = {
  names: [
    'payment_id', 'provider', 'merchant_account_id', 'user_id', 'plan_id', 'amount', 'amount_minor', 'currency', 'status',
    'checkout_session_id', 'payment_intent_id', 'invoice_id', 'subscription_id', 'customer_id', 'created_at', 'updated_at',
  ],
  cells: (p) => [
    p.payment_id, p.provider, p.merchant_account_id, p.user_id, p.plan_id, p.amount, p.amount_minor, p.currency, p.status,
    p.checkout_session_id, p.payment_intent_id, p.invoice_id, p.subscription_id, p.customer_id, p.created_at, p.updated_at,
  ],
};

/**
 * The exports (docs/memberships.md, "Export"): a list's filters, the whole
 * result in one streamed response. Read keys may call them (GETs); the gate counts one request.
 */
export const exportsRoutes: FastifyPluginAsyncTypebox<{ exports: ExportsService }> = async (app, { exports }) => {
  app.get('/v2/projects/:project_id/memberships/export', { schema: exportMembershipsSchema }, async (request, reply) => {
    const { format = 'csv', ...query } = request.query;
    const projectId = request.params.project_id;
    return sendExport(reply, {
      format,
      name: `memberships-${projectId}`,
      body: await exports.memberships(projectId, membershipFilterOf(query), format),
      csv: MEMBERSHIP_CSV,
      // The list's own serializer of an item: the same fields, in the same order.
      json: itemSerializer<MembershipView>(reply, Membership),
    });
  });

  app.get('/v2/projects/:project_id/payments/export', { schema: exportPaymentsSchema }, async (request, reply) => {
    const { format = 'csv', ...query } = request.query;
    const projectId = request.params.project_id;
    return sendExport(reply, {
      format,
      name: `payments-${projectId}`,
      body: await exports.payments(projectId, paymentFilterOf(query), format),
      csv: PAYMENT_CSV,
      json: itemSerializer<PaymentView>(reply, Payment),
    });
  });
};
