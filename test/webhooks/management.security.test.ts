import { describeSecurity } from '../support/security.js';
import { describeTransportErrors } from '../support/transport.js';
import { webhookGet, webhookList, webhookRotateSecret, webhookTest, webhookUpdate } from '../support/webhook-operations.js';

for (const op of [webhookList, webhookGet, webhookUpdate, webhookRotateSecret, webhookTest]) {
  describeSecurity(op);
  describeTransportErrors(op);
}
