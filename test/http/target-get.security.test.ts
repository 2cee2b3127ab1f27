import { targetGet } from '../support/operations.catalogue.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(targetGet);
