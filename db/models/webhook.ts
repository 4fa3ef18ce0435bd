import type { RelationMappings } from 'objection';
import { TenantModel } from './tenant';
import { WebhookDeliveryModel } from './webhook-delivery';

/** A client's webhook subscription (spec §2.10); its deliveries are the delivery log. */
export class WebhookModel extends TenantModel {
  static override tableName = 'webhooks';

  id!: string;
  url!: string;
  secret!: string;
  events!: string[];
  active!: boolean;
  created_at!: Date;

  static override get relationMappings(): RelationMappings {
    return {
      deliveries: {
        relation: TenantModel.HasManyRelation,
        modelClass: WebhookDeliveryModel,
        join: { from: 'webhooks.id', to: 'webhook_deliveries.webhook_id' },
      },
    };
  }
}
