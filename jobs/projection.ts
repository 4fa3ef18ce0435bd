import { naturalKeyOf, type ResourceType, type Source } from '../lib/idap';

/**
 * How a job's result becomes IDAP resources (spec §2.9, §4.5): nodes (resources, identified by
 * their natural keys, so re-projecting the same result changes nothing) and edges between them.
 * Each type's catalog file says how its result projects (`project`); pure: the projectJobResult
 * activity (activities/store/leads.ts) writes the plan.
 */
export interface ProjectionNode {
  type: ResourceType;
  data: Record<string, unknown>;
  /**
   * Only merged into a business the client already has, the one its domain resolves to as an import
   * of `domain:<domain>` would (that key's business, else the oldest holding the domain); never
   * created.
   */
  existingOnly?: boolean;
  /**
   * With existingOnly: written only when `data[field][at]` (an ISO 8601 time) is not older than the
   * stored business's, so that a result taken earlier but projected later (a slow or retried job)
   * never replaces a newer one.
   */
  newerOnly?: { field: string; at: string };
}

export interface Projection {
  source: Source;
  nodes: ProjectionNode[];
  /** Pairs of indexes into `nodes`. */
  edges: [number, number][];
  /** Indexes of the business nodes (queued for the lead index). */
  businesses: number[];
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Collects a projection's nodes, merging nodes with the same natural key, and its edges. */
export class ProjectionBuilder {
  readonly nodes: ProjectionNode[] = [];
  readonly edges: [number, number][] = [];
  readonly businesses: number[] = [];
  private readonly byKey = new Map<string, number>();

  /** Adds a node unless its natural key cannot be derived; returns its index (or undefined). */
  add(
    type: ResourceType,
    data: Obj,
    options: Pick<ProjectionNode, 'existingOnly' | 'newerOnly'> = {},
  ): number | undefined {
    const key = naturalKeyOf(type, data);
    if ('error' in key) return undefined;
    const id = `${type}/${key.key}`;
    const existing = this.byKey.get(id);
    if (existing !== undefined) {
      const node = this.nodes[existing] as ProjectionNode;
      node.data = { ...data, ...node.data };
      return existing;
    }
    this.nodes.push({ type, data, ...options });
    this.byKey.set(id, this.nodes.length - 1);
    if (type === 'businesses') this.businesses.push(this.nodes.length - 1);
    return this.nodes.length - 1;
  }

  relate(a: number | undefined, b: number | undefined): void {
    if (a !== undefined && b !== undefined && a !== b) this.edges.push([a, b]);
  }

  build(source: Source): Projection {
    return { source, nodes: this.nodes, edges: this.edges, businesses: this.businesses };
  }
}
