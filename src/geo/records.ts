/**
 * The fields the service reads from a database record, whichever publisher's layout it has:
 * MaxMind GeoLite2 and DB-IP Lite (`country.iso_code`, `city.names.en`, `location.latitude`,
 * `autonomous_system_number`), and the flat layout of the ip-location-db files (`country_code`,
 * `city`, `latitude`). Anything else in a record is ignored; a field of the wrong type or out of
 * range is treated as absent rather than trusted.
 */
type Rec = Record<string, unknown>;

const obj = (v: unknown): Rec | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const num = (v: unknown, min: number, max: number): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? v : undefined);

/** ISO 3166-1 alpha-2, upper case; `ZZ` and the like (unknown, reserved) are absent. */
export function countryOf(record: unknown): string | undefined {
  const r = obj(record);
  if (!r) return undefined;
  const code = str(obj(r.country)?.iso_code) ?? str(r.country_code) ?? str(obj(r.registered_country)?.iso_code);
  if (code === undefined || !/^[A-Za-z]{2}$/.test(code)) return undefined;
  const upper = code.toUpperCase();
  return upper === 'ZZ' || upper === 'XX' ? undefined : upper;
}

export interface PlaceFields {
  city?: string;
  latitude?: number;
  longitude?: number;
  accuracy_km?: number;
}

/** A name in English when the record has one, else its first name. */
function nameOf(v: unknown): string | undefined {
  const names = obj(obj(v)?.names);
  if (names) return str(names.en) ?? Object.values(names).map(str).find((n) => n !== undefined);
  return str(v);
}

export function placeOf(record: unknown): PlaceFields {
  const r = obj(record);
  if (!r) return {};
  const out: PlaceFields = {};
  const city = nameOf(r.city);
  if (city !== undefined) out.city = city.slice(0, 128);
  const loc = obj(r.location) ?? r;
  const latitude = num(loc.latitude, -90, 90);
  const longitude = num(loc.longitude, -180, 180);
  if (latitude !== undefined && longitude !== undefined) {
    out.latitude = latitude;
    out.longitude = longitude;
    // GeoLite2's accuracy radius is in kilometres; DB-IP and ip-location-db give none.
    const accuracy = num(loc.accuracy_radius, 0, 20_038);
    if (accuracy !== undefined) out.accuracy_km = accuracy;
  }
  return out;
}

export interface NetworkFields {
  asn?: number;
  as_org?: string;
}

export function networkOf(record: unknown): NetworkFields {
  const r = obj(record);
  if (!r) return {};
  const out: NetworkFields = {};
  const raw = r.autonomous_system_number;
  const asn = typeof raw === 'bigint' ? Number(raw) : raw;
  if (typeof asn === 'number' && Number.isInteger(asn) && asn > 0 && asn <= 0xffffffff) out.asn = asn;
  const org = str(r.autonomous_system_organization);
  if (org !== undefined) out.as_org = org.slice(0, 256);
  return out;
}
