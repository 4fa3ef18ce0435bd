import { TenantModel } from './tenant';

/** A business a lead workflow's job found, with its filter, site and verification outcome. */
export class WorkflowBusinessModel extends TenantModel {
  static override tableName = 'workflow_businesses';
  static override idColumn = ['job_id', 'place_id'];

  job_id!: string;
  place_id!: string;
  position!: number;
}
