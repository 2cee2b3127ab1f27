import { settingsGetAll } from '../support/operations.keys.js';
import { describeTransportErrors } from '../support/transport.js';

describeTransportErrors(settingsGetAll);
