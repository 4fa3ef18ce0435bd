import type { StepSetName } from '../jobs/types';
import { crawlCompanyDataSteps } from './company-data';
import { crawlMapsSteps } from './maps';
import { crawlPeopleSteps } from './people';
import { crawlPublicSocialSteps } from './social';
import type { StepSet } from './step-input';

/**
 * The step sets of job types that run as several workflow steps instead of one activity named after
 * the type, by the name their catalog entry gives (JobSpec.steps): the type checks that every name
 * of StepSetName has its set here.
 */
export const STEP_SETS: Readonly<Record<StepSetName, StepSet>> = {
  crawlCompanyDataSteps,
  crawlMapsSteps,
  crawlPeopleSteps,
  crawlPublicSocialSteps,
};

/** Names that running workflows' histories may still carry, and the set each now is. */
const FORMER_NAMES: Readonly<Record<string, StepSetName>> = { companyData: 'crawlCompanyDataSteps' };

/** The step set a RunJobInput names (its current name or a former one); undefined for an unknown name. */
export function stepSetOf(name: string): StepSet | undefined {
  const current = Object.hasOwn(STEP_SETS, name) ? (name as StepSetName) : FORMER_NAMES[name];
  return current && STEP_SETS[current];
}
