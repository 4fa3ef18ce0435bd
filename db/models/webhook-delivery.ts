import { TenantModel } from './tenant';

/** A webhook delivery row, for tenant-scoped queries (the repository's row type is DeliveryRow). */
export class WebhookDeliveryModel extends TenantModel {
  static override tableName = 'webhook_deliveries';

  id!: string;
  status!: string;
}
