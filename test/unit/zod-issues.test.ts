import { z } from 'zod';
import { issuesFromZod } from '../../api/validation';

// zod's issues as the 422 items a client reads.
describe('issuesFromZod', () => {
  const schema = z.object({ events: z.array(z.string()).min(1).max(8), name: z.string().max(3) });
  const issues = (input: unknown) => {
    const result = schema.safeParse(input);
    if (result.success) throw new Error('expected a failure');
    return issuesFromZod(result.error, ['body']);
  };

  test('a value of the wrong type is one issue: not also the size check of the type that was expected', () => {
    // zod runs the array's max(8) on the string too: "expected string to have <=8 characters".
    expect(issues({ events: 'job.queued', name: 'ok' })).toEqual([
      { type: 'invalid_type', loc: ['body', 'events'], msg: 'Invalid input: expected array, received string' },
    ]);
  });

  test('size issues of a value of the right type, and of other fields, stay', () => {
    expect(issues({ events: [], name: 'long' }).map((i) => [i.type, i.loc])).toEqual([
      ['too_small', ['body', 'events']],
      ['too_big', ['body', 'name']],
    ]);
    expect(issues({ events: 'x', name: 'long' }).map((i) => [i.type, i.loc])).toEqual([
      ['invalid_type', ['body', 'events']],
      ['too_big', ['body', 'name']],
    ]);
  });
});
