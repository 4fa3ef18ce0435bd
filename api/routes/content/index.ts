import type { ApiRouter } from '../../routing';
import { authorsRoutes } from './authors';
import { postsRoutes } from './posts';
import { publicRoutes } from './public';
import type { ContentDeps } from './shared';
import { sitesRoutes } from './sites';
import { taxonomyRoutes } from './taxonomy';

export type { ContentDeps } from './shared';

/** The blog content API (spec §2.11/§4.11), one file per sub-resource; registered in this order, as the OpenAPI document lists them. */
export function contentRoutes(api: ApiRouter, deps: ContentDeps): void {
  for (const routes of [sitesRoutes, authorsRoutes, taxonomyRoutes, postsRoutes, publicRoutes]) routes(api, deps);
}
