import { Model, type QueryBuilder } from 'objection';

/** A webhook delivery row, for tenant-scoped queries (the repository's row type is DeliveryRow). */
export class WebhookDeliveryModel extends Model {
  static override tableName = 'webhook_deliveries';

  id!: string;
  client_id!: string;
  status!: string;

  /** Every tenant-scoped query goes through forClient: another client's delivery is simply not there. */
  static override modifiers = {
    forClient(query: QueryBuilder<WebhookDeliveryModel>, clientId: string) {
      query.where('webhook_deliveries.client_id', clientId);
    },
  };
}
