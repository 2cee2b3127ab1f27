import { membershipDelete } from '../support/operations.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(membershipDelete);
