import { TenantModel } from './tenant';

/** A client's LLM provider key (spec §2.12); the repository's row type is IntegrationRow. */
export class IntegrationModel extends TenantModel {
  static override tableName = 'llm_integrations';

  id!: number;
  provider_name!: string;
  credentials_sealed!: string;
}
