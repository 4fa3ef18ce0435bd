import { integrationCreateBody, integrationPatchBody } from '../../api/schemas/integrations';

// The integration settings a client may store: each within what its column holds (spend_limit_amount
// decimal(14,4), prices decimal(12,6), daily_limit and minute_limit integer), so nothing is rounded
// or overflows in Postgres.

const issuesOf = (body: Record<string, unknown>) => {
  const parsed = integrationPatchBody.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path, message: i.message }));
};

describe('spend_limit_amount', () => {
  test.each([0, 1, 0.0001, 0.3, 1.1, 12.3456, 25.5, 999999999.9999, 1e9])(
    '%p fits decimal(14,4): accepted',
    (amount) => {
      expect(issuesOf({ spend_limit_amount: amount })).toEqual([]);
      expect(integrationCreateBody.safeParse({ spend_limit_amount: amount }).success).toBe(true);
    },
  );

  // Written out as a client would send them; 1e-7 and 1.5e-5 print in exponent form.
  test.each([0.00004, 0.00001, 0.00005, 12.3456789, 1e-7, 1.5e-5, 0.30000000000000004, 123456.12345])(
    '%p has more than 4 decimal places: refused naming the field',
    (amount) => {
      expect(issuesOf({ spend_limit_amount: amount })).toEqual([
        { path: ['spend_limit_amount'], message: expect.stringMatching(/spend_limit_amount.*4 decimal places/) },
      ]);
      expect(integrationCreateBody.safeParse({ spend_limit_amount: amount }).success).toBe(false);
    },
  );
});

describe('daily_limit and minute_limit', () => {
  test.each(['daily_limit', 'minute_limit'])('%s: at most 2147483647 (the integer column)', (field) => {
    expect(issuesOf({ [field]: 2147483647 })).toEqual([]);
    expect(issuesOf({ [field]: 2147483648 })).toEqual([
      { path: [field], message: expect.stringContaining('2147483647') },
    ]);
    expect(issuesOf({ [field]: 1e12 })).toHaveLength(1);
  });
});

describe('prices', () => {
  test('input and output fit decimal(12,6): six decimal places accepted, more refused naming the field', () => {
    expect(issuesOf({ prices: { input: 0.15, output: 0.000001 } })).toEqual([]);
    expect(issuesOf({ prices: { input: 2.5, output: 10 } })).toEqual([]);
    expect(issuesOf({ prices: { input: 0.0000001, output: 1 } })).toEqual([
      { path: ['prices', 'input'], message: expect.stringContaining('6 decimal places') },
    ]);
    expect(issuesOf({ prices: { input: 1, output: 1.1234567 } })).toEqual([
      { path: ['prices', 'output'], message: expect.stringContaining('6 decimal places') },
    ]);
  });
});
