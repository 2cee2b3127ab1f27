import { targetList } from '../support/operations.catalogue.js';
import { describePagingErrors } from '../support/paging.js';
import { describeTransportErrors } from '../support/transport.js';

describeTransportErrors(targetList);
describePagingErrors(targetList);
