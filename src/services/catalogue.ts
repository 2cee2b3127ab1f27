import { PlansService } from '../domain/plans/plans.service.js';
import { DEFAULT_SETTINGS } from '../domain/settings/settings.catalogue.js';
import { TargetsService } from '../domain/targets/targets.service.js';
import type { AccessServices } from './access.js';
import type { ServiceInputs } from './inputs.js';

/** What a project sells and where it grants access (docs/plans-targets.md). */
export interface CatalogueServices {
  plans: PlansService;
  targets: TargetsService;
}

export function catalogueServices({ stores }: ServiceInputs, { discordCommands }: Pick<AccessServices, 'discordCommands'>): CatalogueServices {
  return {
    // A plan created without a currency takes the project's default_currency (docs/plans-targets.md).
    plans: new PlansService(stores.plans, async (projectId) => {
      const stored = (await stores.settings.get(projectId, 'default_currency'))?.value;
      return typeof stored === 'string' ? stored : DEFAULT_SETTINGS.default_currency;
    }),
    // A Discord target created or deleted may change the guilds the commands are registered in.
    targets: new TargetsService(stores.targets, (projectId) => void discordCommands.register(projectId)),
  };
}
