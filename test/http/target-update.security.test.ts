import { targetUpdate } from '../support/operations.catalogue.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(targetUpdate);
