import {
  businessNameKey,
  fuzzyKeys,
  nameSimilarity,
  scoreBusiness,
  scoreContact,
  trigramSimilarity,
  editDistance,
  withinOneEdit,
} from '../../lib/dedupe-fuzzy';

describe('fuzzy de-duplication: keys and scores', () => {
  it('a business name key ignores case, accents, punctuation, & for "and", legal forms and a leading "the"', () => {
    expect(businessNameKey('Northgate & Sons Bakers Ltd')).toBe('northgate and sons bakers');
    expect(businessNameKey('Northgate and Sons Bakers')).toBe('northgate and sons bakers');
    expect(businessNameKey('THE Café Müller GmbH & Co. KG')).toBe('cafe muller gmbh and');
    expect(businessNameKey('Bäckerei Schmidt GmbH')).toBe('backerei schmidt');
    expect(businessNameKey("Arnie Morton's of Chicago")).toBe('arnie mortons of chicago');
    expect(businessNameKey('Limited')).toBe('limited');
    expect(businessNameKey('  ')).toBeNull();
  });

  it("trigram similarity is pg_trgm's (word trigrams padded with two spaces before, one after)", () => {
    // pg_trgm: similarity('word', 'two words') = 0.363636 (4 shared of 11)
    expect(trigramSimilarity('word', 'two words')).toBeCloseTo(4 / 11, 6);
    expect(trigramSimilarity('abc', 'abc')).toBe(1);
    expect(trigramSimilarity('abc', 'xyz')).toBe(0);
    expect(nameSimilarity('arnie mortons of chicago', 'arnie mortons')).toBeGreaterThanOrEqual(0.8);
  });

  it('the same business spelled differently in the same city is a fuzzy match with a high confidence, and says why', () => {
    const s = scoreBusiness(
      { company_name: 'Northgate & Sons Bakers Ltd', city: 'York', country: 'GB' },
      { company_name: 'Northgate and Sons Bakers', city: 'york', country: 'gb' },
    );
    expect(s?.confidence).toBeGreaterThan(0.9);
    expect(s?.fields.company_name).toMatchObject({ score: 1, agreed: true });
    expect(s?.fields.city).toMatchObject({ agreed: true });
    expect(s?.fields.country).toMatchObject({ agreed: true });
  });

  it('a name alone is no match (two "Royal Oak" pubs in different cities), nor a name with a disagreeing country', () => {
    expect(scoreBusiness({ company_name: 'The Royal Oak' }, { company_name: 'Royal Oak' })?.confidence).toBe(0);
    expect(
      scoreBusiness({ company_name: 'The Royal Oak', city: 'York' }, { company_name: 'Royal Oak', city: 'Leeds' })
        ?.confidence,
    ).toBe(0);
    expect(
      scoreBusiness(
        { company_name: 'Acme Widgets', city: 'Paris', country: 'FR' },
        { company_name: 'Acme Widgets', city: 'Paris', country: 'US' },
      )?.confidence,
    ).toBeLessThan(0.05);
  });

  it('branches and neighbours with different numbers are not matched: Leeds Bakery 1 and 2, 1 and 2 Briggate', () => {
    expect(
      scoreBusiness(
        { company_name: 'Leeds Bakery 1', address: '1 Briggate, Leeds LS1 6HD', country: 'GB' },
        { company_name: 'Leeds Bakery 2', address: '2 Briggate, Leeds LS1 6HD, UK', country: 'GB' },
      )?.confidence,
    ).toBe(0);
    expect(
      scoreBusiness(
        { company_name: 'Leeds Bakery', address: '1 Briggate, Leeds' },
        { company_name: 'Leeds Bakery', address: '2 Briggate, Leeds' },
      )?.confidence,
    ).toBe(0);
    const same = scoreBusiness(
      { company_name: 'LEEDS BAKERY 1 LTD', address: '1 Briggate, Leeds LS1 6HD', country: 'GB' },
      { company_name: 'Leeds Bakery 1', address: '1 Briggate, Leeds LS1 6HD, UK', country: 'GB' },
    );
    expect(same?.confidence).toBeGreaterThan(0.95);
    expect(same?.fields.address).toMatchObject({ agreed: true });
  });

  it('a shared phone or website corroborates a similar name without a city', () => {
    const byPhone = scoreBusiness(
      { company_name: "Arnie Morton's of Chicago", phone: '310/246-1501' },
      { company_name: "Arnie Morton's", phone: '+1 310-246-1501' },
    );
    expect(byPhone?.confidence).toBeGreaterThan(0.9);
    expect(byPhone?.fields.phone).toMatchObject({ agreed: true });
    const bySite = scoreBusiness(
      { company_name: 'Acme Widgets Ltd', website: 'https://www.acme.co.uk/about' },
      { company_name: 'ACME Widgets', company_domain: 'acme.co.uk' },
    );
    expect(bySite?.confidence).toBeGreaterThan(0.9);
  });

  it('the same name in the same city with another phone and address is a weak match, below the default threshold of 0.5', () => {
    const weak = scoreBusiness(
      { company_name: 'Northgate Bakers', city: 'York', phone: '01904 111222', address: '1 Mill Lane' },
      { company_name: 'Northgate Bakers Ltd', city: 'York', phone: '01904 333444', address: '22 High Street' },
    );
    expect(weak?.fields.company_name?.agreed).toBe(true);
    expect(weak?.fields.phone?.agreed).toBe(false);
    expect(weak?.fields.address?.agreed).toBe(false);
    expect(weak?.confidence).toBeGreaterThan(0);
    expect(weak?.confidence).toBeLessThan(0.5);
  });

  it("names that each have a word the other lacks are two businesses, even at one address and phone (a hotel's cafe and its dining room); a typo or a short form is not", () => {
    const hotel = { phone: '404/237-2700', city: 'atlanta', address: '3434 peachtree rd.' };
    expect(
      scoreBusiness(
        { company_name: 'cafe ritz-carlton buckhead', ...hotel },
        { company_name: 'ritz-carlton dining room (buckhead)', ...hotel },
      )?.confidence,
    ).toBe(0);
    expect(
      scoreBusiness(
        { company_name: 'Northgate Bakres', city: 'York' },
        { company_name: 'Northgate Bakers', city: 'York' },
      )?.confidence,
    ).toBeGreaterThan(0.5);
    expect(
      scoreBusiness(
        { company_name: "Art's Delicatessen", city: 'Studio City' },
        { company_name: 'Arts Deli', city: 'studio city' },
      )?.confidence,
    ).toBeGreaterThan(0.5);
    expect(
      scoreBusiness(
        { company_name: 'Lespinasse', city: 'New York' },
        { company_name: 'Lespinasse (New York City)', city: 'new york city' },
      )?.confidence,
    ).toBeGreaterThan(0.5);
  });

  it('people of one company domain: the same name, an initial, a short form and a typo match; another first name does not', () => {
    const john = { first_name: 'John', last_name: 'Smith', company_domain: 'acme.com' };
    expect(scoreContact(john, { full_name: 'John Smith', email: 'john.smith@acme.com' })?.confidence).toBeGreaterThan(
      0.95,
    );
    const initial = scoreContact(john, { full_name: 'J. Smith', website: 'https://acme.com' });
    expect(initial?.confidence).toBeGreaterThan(0.5);
    expect(initial?.fields.first_name).toMatchObject({ agreed: true, score: 0.5 });
    expect(
      scoreContact(
        { first_name: 'Christopher', last_name: 'Jones', company_domain: 'acme.com' },
        { full_name: 'Chris Jones', company_domain: 'acme.com' },
      )?.confidence,
    ).toBeGreaterThan(0.8);
    expect(
      scoreContact(john, { first_name: 'Jon', last_name: 'Smith', company_domain: 'acme.com' })?.confidence,
    ).toBeGreaterThan(0.5);
    expect(scoreContact(john, { first_name: 'Mary', last_name: 'Smith', company_domain: 'acme.com' })?.confidence).toBe(
      0,
    );
    expect(scoreContact(john, { first_name: 'John', last_name: 'Smith', company_domain: 'other.com' })).toBeNull();
  });

  it("the keys a record is found by: name words' starts in its town (or country) and its house and street for a business, domain|last name for a person", () => {
    expect(
      fuzzyKeys({
        company_name: 'Northgate & Sons Ltd',
        full_name: 'Ann Baker',
        email: 'ann@northgate.co.uk',
        city: 'York',
        address: '12 Mill Lane, York',
      }),
    ).toEqual({
      name: 'northgate and sons',
      person: 'northgate.co.uk|baker',
      blocks: ['york|nort', 'york|=northgate', 'york|and', 'york|sons', '@12|mill'],
    });
    expect(fuzzyKeys({ company_name: 'Katsu', country: 'US' }).blocks).toEqual(['us|kats', 'us|=katsu']);
    expect(fuzzyKeys({ company_name: 'Lespinasse', city: 'New York City' }).blocks).toEqual(
      fuzzyKeys({ company_name: 'lespinasse (New York)', city: 'new york' }).blocks.slice(0, 2),
    );
    expect(fuzzyKeys({ email: 'x@y.com' })).toEqual({ name: null, person: null, blocks: [] });
  });
});

describe('one edit apart', () => {
  test('withinOneEdit agrees with editDistance <= 1 on every pair of a set of near and far words', () => {
    const words = [
      'bakers',
      'bakres',
      'baker',
      'bakery',
      'bkaers',
      'bakersx',
      'xbakers',
      'bakes',
      'makers',
      'banker',
      'bakkers',
      'ab',
      'ba',
      'a',
      '',
    ];
    for (const a of words)
      for (const b of words) expect([a, b, withinOneEdit(a, b)]).toEqual([a, b, editDistance(a, b) <= 1]);
  });
});
