import { bestEmail, neutralise } from '../../api/exports/columns';
import type { VerifiedEmail } from '../../jobs/workflow';

const v = (email: string, status: VerifiedEmail['status'], score: number): VerifiedEmail => ({
  email,
  status,
  score,
  is_deliverable: status === 'valid',
  is_free_email: false,
  is_disposable: false,
  is_role_account: false,
});

describe('bestEmail', () => {
  test('valid before risky before unknown, higher score first', () => {
    expect(
      bestEmail(
        [],
        [
          v('u@x.test', 'unknown', 99),
          v('r@x.test', 'risky', 98),
          v('a@x.test', 'valid', 60),
          v('b@x.test', 'valid', 80),
        ],
      ),
    ).toEqual({ email: 'b@x.test', status: 'valid', score: 80 });
    expect(bestEmail([], [v('u@x.test', 'unknown', 99), v('r@x.test', 'risky', 10)])?.email).toBe('r@x.test');
  });

  test('without verification the first found; invalid addresses never', () => {
    expect(bestEmail(['first@x.test', 'second@x.test'], [])).toEqual({
      email: 'first@x.test',
      status: null,
      score: null,
    });
    expect(bestEmail(['bad@x.test'], [v('bad@x.test', 'invalid', 100)])).toBeNull();
    // Verified invalid, another found but not verified yet: the unverified one.
    expect(bestEmail(['bad@x.test', 'later@x.test'], [v('BAD@x.test', 'invalid', 100)])?.email).toBe('later@x.test');
    expect(bestEmail([], [])).toBeNull();
  });
});

describe('neutralise (OWASP CSV injection)', () => {
  test.each([
    ['=SUM(A1)', "'=SUM(A1)"],
    ["+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"],
    ['-2+3', "'-2+3"],
    ['@SUM(1)', "'@SUM(1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['+44 113 496 0000', '+44 113 496 0000'],
    ['-12.5', '-12.5'],
    ['+1 (555) 010-0000', '+1 (555) 010-0000'],
    ['plain', 'plain'],
    ['a=b', 'a=b'],
  ])('%j -> %j', (input, out) => {
    expect(neutralise(input)).toBe(out);
  });
});
