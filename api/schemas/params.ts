import { z } from 'zod';

/**
 * A UUID in the path. The document says `format: uuid`; validation keeps it a string because the
 * handler answers an id of another form itself, as the spec words it (400 "invalid job id format,
 * expected UUID") or as an unknown id (404), whatever its length.
 */
export const uuidParam = (description: string) => z.string().meta({ format: 'uuid' }).describe(description);
