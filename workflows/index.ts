// The worker's workflowsPath: every workflow the workers run, and nothing else.
export { runJob } from './job';
export { indexLeads } from './leads';
