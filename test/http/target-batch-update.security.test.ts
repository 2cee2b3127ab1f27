import { targetBatchUpdate } from '../support/operations.catalogue.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(targetBatchUpdate);
