import { Model } from 'objection';

/** Timestamps kept by the model; snake_case columns as stored. */
export class BaseModel extends Model {
  created_at!: Date;
  updated_at!: Date;

  override $beforeUpdate(): void {
    this.updated_at = new Date();
  }
}
