import type { Clock } from '../clock.js';
import type { ImportChunks } from '../memberships/membership-import.js';
import type { MembershipsService } from '../memberships/memberships.service.js';
import type { PlansService } from '../plans/plans.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import type { TargetsService } from '../targets/targets.service.js';
import type { UsersService } from '../users/users.service.js';

/** The services a move writes through (narrow: what it calls). */
export interface MoveInServices {
  settings: Pick<SettingsService, 'get' | 'put'>;
  targets: Pick<TargetsService, 'create' | 'list'>;
  plans: Pick<PlansService, 'get' | 'create' | 'addTarget'>;
  memberships: Pick<MembershipsService, 'create' | 'list'>;
  users: Pick<UsersService, 'ban'>;
  /**
   * Where memberships that already ended are written: the membership import's chunks, the one
   * path that keeps a past end date and the start date (docs/configuration.md, "Importing
   * memberships"), with the same `membership.created` event.
   */
  endedMemberships: ImportChunks;
  clock: Clock;
}

/** Local lists are read this many at a time (tenure's own page cap). */
export const LOCAL_PAGE = 100;
