// The step sets of job types that run as several workflow steps instead of one activity named after
// the type. A type's catalog entry names its set (JobSpec.steps); runJob looks it up here by that name.
export { companyData } from './company-data';
export { crawlMapsSteps } from './maps';
export { crawlPublicSocialSteps } from './social';
export { crawlPeopleSteps } from './people';
