import { apiKeyList } from '../support/operations.keys.js';
import { describePagingErrors } from '../support/paging.js';
import { describeTransportErrors } from '../support/transport.js';

describeTransportErrors(apiKeyList);
describePagingErrors(apiKeyList);
