// The worker's workflowsPath: every workflow the workers run, and nothing else.
export { runCampaign, releaseSignal, type RunCampaignInput, type RunCampaignResult } from './campaign';
export { runJob, type RunJobInput, type RunJobResult } from './job';
export { indexLeads } from './leads';
export { deliverWebhookEvent } from './webhooks';
export { runLeadPipeline } from './lead-pipeline';
export { sendMailMessage, snoozeMailMessage, syncMailbox, type SendMailInput } from './mail';
