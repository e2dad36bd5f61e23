import { describe, expect, it } from 'vitest';
import { countryOf, networkOf, placeOf } from './records.js';

describe('reading records of each publisher\'s layout', () => {
  it('country: GeoLite2 and DB-IP (country.iso_code), the flat ip-location-db layout, registered_country as a fallback', () => {
    expect(countryOf({ country: { iso_code: 'KE', names: { en: 'Kenya' } } })).toBe('KE');
    expect(countryOf({ country_code: 'pt' })).toBe('PT');
    expect(countryOf({ registered_country: { iso_code: 'US' } })).toBe('US');
    expect(countryOf({ country: { iso_code: 'KE' }, registered_country: { iso_code: 'GB' } })).toBe('KE');
  });

  it('country: unknown or malformed codes are absent, not trusted', () => {
    for (const r of [null, 'KE', {}, { country_code: 'ZZ' }, { country_code: 'XX' }, { country_code: 'KEN' }, { country: { iso_code: 1 } }, { country_code: '' }]) {
      expect(countryOf(r), JSON.stringify(r)).toBeUndefined();
    }
  });

  it('place: GeoLite2 (names and an accuracy radius), DB-IP (names, no radius), flat (city string, latitude, longitude)', () => {
    expect(placeOf({ city: { names: { en: 'Nairobi', fr: 'Nairobi' } }, location: { latitude: -1.2864, longitude: 36.8172, accuracy_radius: 20 } }))
      .toEqual({ city: 'Nairobi', latitude: -1.2864, longitude: 36.8172, accuracy_km: 20 });
    expect(placeOf({ city: { names: { pt: 'Lisboa' } }, location: { latitude: 38.7223, longitude: -9.1393 } })).toEqual({ city: 'Lisboa', latitude: 38.7223, longitude: -9.1393 });
    expect(placeOf({ city: 'Mombasa', country_code: 'KE', latitude: -4.05, longitude: 39.67 })).toEqual({ city: 'Mombasa', latitude: -4.05, longitude: 39.67 });
  });

  it('place: coordinates out of range, or one without the other, are dropped', () => {
    expect(placeOf({ location: { latitude: 91, longitude: 10 } })).toEqual({});
    expect(placeOf({ location: { latitude: 10 } })).toEqual({});
    expect(placeOf({ location: { latitude: '1', longitude: '2' } })).toEqual({});
    expect(placeOf(null)).toEqual({});
  });

  it('network: the ASN as a number (also from a 64-bit integer) and its organisation', () => {
    expect(networkOf({ autonomous_system_number: 33771, autonomous_system_organization: 'Safaricom Limited' })).toEqual({ asn: 33771, as_org: 'Safaricom Limited' });
    expect(networkOf({ autonomous_system_number: 3243n })).toEqual({ asn: 3243 });
    expect(networkOf({ autonomous_system_number: -1, autonomous_system_organization: '' })).toEqual({});
    expect(networkOf(undefined)).toEqual({});
  });
});
