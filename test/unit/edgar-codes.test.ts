import { EDGAR_LOCATIONS } from '../../activities/company/edgar-codes';
import { edgarLocation } from '../../activities/company/sec';

describe("EDGAR's state and country codes as ISO 3166-1", () => {
  test('foreign codes map to their ISO country', () => {
    expect(edgarLocation('2M')).toEqual({ country: 'DE', region: null });
    expect(edgarLocation('M0')).toEqual({ country: 'JP', region: null });
    expect(edgarLocation('X0')).toEqual({ country: 'GB', region: null });
    expect(edgarLocation('P7')).toEqual({ country: 'NL', region: null });
    expect(edgarLocation('F4')).toEqual({ country: 'CN', region: null });
    expect(edgarLocation('K3')).toEqual({ country: 'HK', region: null });
    expect(edgarLocation('E9')).toEqual({ country: 'KY', region: null });
    expect(edgarLocation('D0')).toEqual({ country: 'BM', region: null });
    expect(edgarLocation('V8')).toEqual({ country: 'CH', region: null });
    expect(edgarLocation('L2')).toEqual({ country: 'IE', region: null });
    expect(edgarLocation('U0')).toEqual({ country: 'SG', region: null });
  });

  test('Canadian provinces A0..B0 (and Z4, federal) are Canada with the province', () => {
    expect(edgarLocation('A0')).toEqual({ country: 'CA', region: 'AB' });
    expect(edgarLocation('A1')).toEqual({ country: 'CA', region: 'BC' });
    expect(edgarLocation('A6')).toEqual({ country: 'CA', region: 'ON' });
    expect(edgarLocation('A8')).toEqual({ country: 'CA', region: 'QC' });
    expect(edgarLocation('B0')).toEqual({ country: 'CA', region: 'YT' });
    expect(edgarLocation('Z4')).toEqual({ country: 'CA', region: null });
  });

  test('US states are the US with the state; X1 is the US', () => {
    expect(edgarLocation('CA')).toEqual({ country: 'US', region: 'CA' });
    expect(edgarLocation('de')).toEqual({ country: 'US', region: 'DE' });
    expect(edgarLocation('X1')).toEqual({ country: 'US', region: null });
    expect(edgarLocation('PR')).toEqual({ country: 'PR', region: null });
  });

  test('the table is the whole list: every code maps to a two-letter ISO code or, for a country ISO no longer has, null', () => {
    const entries = Object.entries(EDGAR_LOCATIONS);
    expect(entries.length).toBeGreaterThanOrEqual(300);
    for (const [code, [iso]] of entries) {
      expect(code).toMatch(/^[0-9A-Z]{2}$/);
      if (iso !== null) expect(iso).toMatch(/^[A-Z]{2}$/);
    }
    expect(entries.filter(([, [iso]]) => iso === null).map(([code]) => code)).toEqual(['P8']);
    expect(edgarLocation('P8')).toBeUndefined();
    expect(edgarLocation('ZZ')).toBeUndefined();
  });
});
