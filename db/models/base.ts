import { Model } from 'objection';

// A mixin's constructor type takes any arguments (TypeScript's rule for mixin classes).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyModelClass = abstract new (...args: any[]) => Model;

/**
 * A model whose `updated_at` is set on every update made through it (Objection calls
 * `$beforeUpdate` for `patch` and `update`, on a query and on an instance). Applied to the model
 * base it extends: `class ClientModel extends BaseModel`, `class JobModel extends Timestamped(TenantModel)`.
 */
export function Timestamped<C extends AnyModelClass>(Base: C) {
  abstract class Stamped extends Base {
    created_at!: Date;
    updated_at!: Date;

    override $beforeUpdate(): void {
      this.updated_at = new Date();
    }
  }
  return Stamped;
}

/** Timestamps kept by the model; snake_case columns as stored. */
export class BaseModel extends Timestamped(Model) {}
