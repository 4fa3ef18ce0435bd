import {
  absorbPerson,
  emailPattern,
  guessEmails,
  matchesRoles,
  mergeSightings,
  officerName,
  officerSightings,
  proflinkSightings,
  seniorityOf,
  splitName,
  type Sighting,
} from '../../activities/people/people';

const seen = (name: string, more: Partial<Sighting> = {}): Sighting => ({
  name,
  position: null,
  email: null,
  proflink_url: null,
  source: 'https://acme.test/team',
  ...more,
});

describe('names', () => {
  test('first and last names without titles; particles stay with the last name', () => {
    expect(splitName('Dr. Grace B. Hopper')).toEqual({ first: 'Grace', last: 'Hopper' });
    expect(splitName('Ludwig van Beethoven')).toEqual({ first: 'Ludwig', last: 'van Beethoven' });
    expect(splitName('Cher')).toEqual({ first: 'Cher', last: null });
  });

  test('registry officers "SURNAME, Given Names" read as people write them', () => {
    expect(officerName('COOKSON, Alastair John Ivor')).toBe('Alastair John Ivor Cookson');
    expect(officerName('HARRIS, Jane Elizabeth')).toBe('Jane Elizabeth Harris');
  });

  test('current officers only, citing the registry page', () => {
    const officers = [
      {
        name: 'COOKSON, Alastair',
        role: 'director',
        appointed_on: null,
        resigned_on: '2017-05-22',
        nationality: null,
        occupation: null,
        country_of_residence: null,
      },
      {
        name: 'HARRIS, Jane',
        role: 'llp-designated-member',
        appointed_on: null,
        resigned_on: null,
        nationality: null,
        occupation: null,
        country_of_residence: null,
      },
    ];
    expect(officerSightings(officers, 'https://registry/03323845')).toEqual([
      {
        name: 'Jane Harris',
        position: 'llp designated member',
        email: null,
        proflink_url: null,
        source: 'https://registry/03323845',
      },
    ]);
  });

  test('personal profile links name people by their slug; company pages and odd slugs do not', () => {
    const page = {
      url: 'https://acme.test/about',
      social: [
        'https://uk.linkedin.com/in/grace-hopper-3a1b2c/',
        'https://www.linkedin.com/company/acme',
        'https://www.linkedin.com/in/gh1906',
        'https://twitter.com/acme',
      ],
    };
    expect(proflinkSightings(page)).toEqual([
      {
        name: 'Grace Hopper',
        position: null,
        email: null,
        proflink_url: 'https://www.linkedin.com/in/grace-hopper-3a1b2c',
        source: 'https://acme.test/about',
      },
    ]);
  });
});

describe('merging', () => {
  test('one person per name or shared address/profile, fields from the first source that has them, every source once', () => {
    const people = mergeSightings([
      seen('Grace Hopper', { position: 'Head of Engineering' }),
      seen('grace hopper', { email: 'grace@acme.test', source: 'https://acme.test/contact' }),
      seen('Dr Grace Hopper', {
        proflink_url: 'https://www.linkedin.com/in/grace-hopper',
        source: 'https://acme.test/contact',
      }),
      seen('G. Hopper', { email: 'grace@acme.test', source: 'https://acme.test/news' }),
      seen('Alan Turing', { position: 'Research Lead' }),
    ]);
    expect(people).toEqual([
      {
        full_name: 'Grace Hopper',
        first_name: 'Grace',
        last_name: 'Hopper',
        position: 'Head of Engineering',
        seniority: 'director',
        email: 'grace@acme.test',
        email_guess: null,
        proflink_url: 'https://www.linkedin.com/in/grace-hopper',
        sources: ['https://acme.test/team', 'https://acme.test/contact', 'https://acme.test/news'],
      },
      {
        full_name: 'Alan Turing',
        first_name: 'Alan',
        last_name: 'Turing',
        position: 'Research Lead',
        seniority: 'manager',
        email: null,
        email_guess: null,
        proflink_url: null,
        sources: ['https://acme.test/team'],
      },
    ]);
  });

  test('seniority and the roles filter read the position', () => {
    expect(['Co-Founder & CEO', 'VP Sales', 'Sales Manager', 'Account Executive', null].map(seniorityOf)).toEqual([
      'executive',
      'director',
      'manager',
      'staff',
      null,
    ]);
    expect(matchesRoles('Co-Founder & CEO', ['founder'])).toBe(true);
    expect(matchesRoles('Head of Business Development', ['sales'])).toBe(true);
    expect(matchesRoles('Research Lead', ['sales', 'founder'])).toBe(false);
    expect(matchesRoles(null, ['sales'])).toBe(false);
    expect(matchesRoles(null, [])).toBe(true);
  });
});

describe('e-mail pattern', () => {
  test('learnt from known addresses (most examples win), applied as guesses to the others only', () => {
    const people = mergeSightings([
      seen('Grace Hopper', { email: 'grace.hopper@acme.test' }),
      seen('Ada Lovelace', { email: 'ada.lovelace@acme.test' }),
      seen('Alan Turing', { email: 'aturing@acme.test' }),
      seen('Jürgen Müller'),
      seen('Cher'),
    ]);
    const pattern = emailPattern(people);
    expect(pattern).toEqual({ pattern: 'first.last', domain: 'acme.test', examples: 2 });
    guessEmails(people, pattern);
    expect(people.map((p) => [p.full_name, p.email_guess])).toEqual([
      ['Grace Hopper', null],
      ['Ada Lovelace', null],
      ['Alan Turing', null],
      ['Jürgen Müller', 'jurgen.muller@acme.test'],
      ['Cher', null],
    ]);
  });

  test('no known address that fits a pattern: no guesses', () => {
    const people = mergeSightings([seen('Grace Hopper', { email: 'info@acme.test' }), seen('Alan Turing')]);
    expect(emailPattern(people)).toBeNull();
  });
});

describe('one person found twice', () => {
  test("the store's merge of two entries: the known address replaces the guess, a position brings its seniority, every source once", () => {
    const [guessed] = mergeSightings([seen('Jonathan Smith')]);
    const [known] = mergeSightings([
      seen('Jon Smith', {
        email: 'jon@acme.test',
        position: 'Chief Technology Officer',
        source: 'https://acme.test/about',
      }),
    ]);
    if (!guessed || !known) throw new Error('no people');
    guessEmails([guessed], { pattern: 'first', domain: 'acme.test' });
    expect(guessed).toMatchObject({ email: null, email_guess: 'jonathan@acme.test', seniority: null });
    absorbPerson(guessed, known);
    expect(guessed).toMatchObject({
      email: 'jon@acme.test',
      email_guess: null,
      position: 'Chief Technology Officer',
      seniority: 'executive',
      sources: ['https://acme.test/team', 'https://acme.test/about'],
    });

    // The other way round: the first had the address; a guess of the second does not come along.
    const [first] = mergeSightings([seen('Ada Lovelace', { email: 'ada@acme.test' })]);
    const [second] = mergeSightings([seen('A. Lovelace')]);
    if (!first || !second) throw new Error('no people');
    second.email_guess = 'a.lovelace@acme.test';
    absorbPerson(first, second);
    expect(first).toMatchObject({ email: 'ada@acme.test', email_guess: null });
  });
});
