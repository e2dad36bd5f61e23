/**
 * Geofences: circles `{ type: 'circle', lat, lon, radius_m }` and polygons
 * `{ type: 'polygon', points: [[lat, lon], ...] }`, in degrees (WGS 84) and metres. A location
 * is inside the geofences when it is inside one of them (the union is not considered: an
 * uncertainty disc across two overlapping fences, wholly in neither, is outside).
 *
 * Conservative: the whole uncertainty disc (centre, radius `accuracy_m`) must be inside. Circle:
 * haversine distance + accuracy ≤ radius (touching counts). Polygon: the point is inside by ray
 * casting (even-odd) on (lat, lon), and its distance to every edge is ≥ accuracy, measured in a
 * local equirectangular projection centred on the point (exact enough at accuracy distances).
 *
 * Validation (InvalidRuleError): finite numbers, lat −90…90, lon −180…180, 0 < radius_m ≤ 100 km,
 * 3 to 1000 polygon points (a repeated closing point is fine), no unknown keys, a non-empty list.
 * Polygon limits (edges are straight lines in lat/lon, not great circles, which is only right for
 * branch-sized areas): vertices within ±85° latitude (use a circle near the poles; circles work
 * everywhere); every edge goes the short way in longitude and spans < 180° (so a polygon may cross
 * the antimeridian: [[-17, 179.9], [-17, -179.9], ...] is 0.2° wide); it may not wind around a
 * pole or span 180° of longitude or more; it must enclose some area. Self-intersection is not
 * checked: such a polygon is read by the even-odd rule.
 *
 * `locationCheck` says `bad_location`, before looking at any fence, when the location is missing,
 * a coordinate or the accuracy is not a finite number (NaN, Infinity, a string), a coordinate is
 * out of range, the accuracy is negative, or it is worse (larger) than `maxAccuracyM` (an invalid
 * `maxAccuracyM`, such as NaN, makes every location bad: fail closed).
 *
 * Evaluation allocates nothing: fences live in Float64Arrays; a latitude band (and for polygons
 * a bounding box) rejects far fences before any trigonometry.
 */
import { InvalidRuleError, quoteValue } from './errors.js';

export interface CircleGeofence {
  type: 'circle';
  lat: number;
  lon: number;
  radius_m: number;
}

export interface PolygonGeofence {
  type: 'polygon';
  /** Vertices as [lat, lon], in order, 3 to 1000. */
  points: ReadonlyArray<readonly [number, number]>;
}

export type Geofence = CircleGeofence | PolygonGeofence;

/** A device's location as a client reports it; fields are checked at run time, so any object will do. */
export interface LocationFix {
  readonly latitude?: unknown;
  readonly longitude?: unknown;
  readonly accuracy_m?: unknown;
}

export type LocationVerdict = 'inside' | 'outside' | 'bad_location';

/** Compiled geofences, for `locationCheck`. */
export interface CompiledGeofences {
  /** The number of fences. */
  readonly size: number;
}

export const EARTH_RADIUS_M = 6_371_008.8;
export const MAX_RADIUS_M = 100_000;
export const MAX_POLYGON_POINTS = 1000;
export const MAX_POLYGON_LATITUDE = 85;

const RAD = Math.PI / 180;
const METRES_PER_DEGREE = EARTH_RADIUS_M * RAD;

interface Polygon {
  readonly lat: Float64Array;
  /** Longitudes unwrapped so no edge jumps at the antimeridian (may leave −180…180). */
  readonly lon: Float64Array;
  readonly minLat: number;
  readonly maxLat: number;
  readonly minLon: number;
  readonly maxLon: number;
  /** Longitude a query is unwrapped around. */
  readonly midLon: number;
}

interface Fences {
  /** Per circle: lat (rad), lon (rad), cos(lat), radius (m). */
  readonly circles: Float64Array;
  readonly polygons: readonly Polygon[];
}

const FENCES = Symbol('geofences');
interface CompiledGeofencesInternal extends CompiledGeofences {
  readonly [FENCES]: Fences;
}

const CIRCLE_KEYS = new Set(['type', 'lat', 'lon', 'radius_m']);
const POLYGON_KEYS = new Set(['type', 'points']);

/** d brought into [−180, 180]. */
function wrap180(d: number): number {
  return d - 360 * Math.round(d / 360);
}

function latitude(value: unknown, at: string, limit = 90): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < -limit || value > limit) {
    throw new InvalidRuleError(at, `${quoteValue(value)} is not a latitude (−${limit} to ${limit})`);
  }
  return value;
}

function longitude(value: unknown, at: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < -180 || value > 180) {
    throw new InvalidRuleError(at, `${quoteValue(value)} is not a longitude (−180 to 180)`);
  }
  return value;
}

function checkKeys(fence: Record<string, unknown>, allowed: Set<string>, at: string): void {
  for (const key of Object.keys(fence)) {
    if (!allowed.has(key)) throw new InvalidRuleError(`${at}.${key}`, `is not a ${String(fence.type)} setting (${[...allowed].join(', ')})`);
  }
}

function compileCircle(fence: Record<string, unknown>, at: string, circles: number[]): void {
  checkKeys(fence, CIRCLE_KEYS, at);
  const lat = latitude(fence.lat, `${at}.lat`);
  const lon = longitude(fence.lon, `${at}.lon`);
  const radius = fence.radius_m;
  if (typeof radius !== 'number' || !(radius > 0 && radius <= MAX_RADIUS_M)) {
    throw new InvalidRuleError(`${at}.radius_m`, `${quoteValue(radius)} is not a radius in metres (more than 0, at most ${MAX_RADIUS_M})`);
  }
  circles.push(lat * RAD, lon * RAD, Math.cos(lat * RAD), radius);
}

function compilePolygon(fence: Record<string, unknown>, at: string): Polygon {
  checkKeys(fence, POLYGON_KEYS, at);
  const points = fence.points;
  if (!Array.isArray(points) || points.length < 3 || points.length > MAX_POLYGON_POINTS) {
    throw new InvalidRuleError(`${at}.points`, `must be a list of 3 to ${MAX_POLYGON_POINTS} [lat, lon] points, not ${Array.isArray(points) ? `${points.length} points` : quoteValue(points)}`);
  }
  const n = points.length;
  const lat = new Float64Array(n);
  const lon = new Float64Array(n);
  const raw = new Float64Array(n);
  points.forEach((point: unknown, i) => {
    const where = `${at}.points[${i}]`;
    if (!Array.isArray(point) || point.length !== 2) throw new InvalidRuleError(where, `${quoteValue(point)} is not a [lat, lon] pair`);
    lat[i] = latitude(point[0], `${where}[0]`, MAX_POLYGON_LATITUDE);
    raw[i] = longitude(point[1], `${where}[1]`);
  });
  // Unwrap: each edge goes the short way, so an edge across the antimeridian does not jump 360°.
  lon[0] = raw[0]!;
  for (let i = 1; i <= n; i++) {
    const step = wrap180(raw[i % n]! - raw[i - 1]!);
    if (Math.abs(step) >= 180) throw new InvalidRuleError(`${at}.points[${i % n}]`, 'the edge to this point spans 180° of longitude or more');
    if (i < n) lon[i] = lon[i - 1]! + step;
    else if (Math.abs(lon[n - 1]! + step - lon[0]!) > 1e-9) throw new InvalidRuleError(`${at}.points`, 'the polygon winds around a pole');
  }
  let minLat = Infinity;
  let maxLat = -Infinity;
  let minLon = Infinity;
  let maxLon = -Infinity;
  let area2 = 0;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    minLat = Math.min(minLat, lat[i]!);
    maxLat = Math.max(maxLat, lat[i]!);
    minLon = Math.min(minLon, lon[i]!);
    maxLon = Math.max(maxLon, lon[i]!);
    area2 += (lon[j]! - lon[i]!) * (lat[j]! + lat[i]!);
  }
  if (maxLon - minLon >= 180) throw new InvalidRuleError(`${at}.points`, 'the polygon spans 180° of longitude or more');
  if (area2 === 0) throw new InvalidRuleError(`${at}.points`, 'the polygon encloses no area');
  return { lat, lon, minLat, maxLat, minLon, maxLon, midLon: (minLon + maxLon) / 2 };
}

/**
 * Compiles a list of geofences (see the file header for the rules).
 * @param field the list's path in the rule set, for error messages.
 * @throws InvalidRuleError naming the first unusable value, e.g. `geofences[0].radius_m: 0 is not a radius in metres (...)`.
 */
export function compileGeofences(list: readonly Geofence[], field = 'geofences'): CompiledGeofences {
  if (!Array.isArray(list) || list.length === 0) {
    throw new InvalidRuleError(field, `must be a non-empty list of geofences (omit it to allow any location), not ${quoteValue(list)}`);
  }
  const circles: number[] = [];
  const polygons: Polygon[] = [];
  list.forEach((fence: unknown, i) => {
    const at = `${field}[${i}]`;
    if (typeof fence !== 'object' || fence === null || Array.isArray(fence)) throw new InvalidRuleError(at, `${quoteValue(fence)} is not a geofence`);
    const f = fence as Record<string, unknown>;
    if (f.type === 'circle') compileCircle(f, at, circles);
    else if (f.type === 'polygon') polygons.push(compilePolygon(f, at));
    else throw new InvalidRuleError(`${at}.type`, `${quoteValue(f.type)} is not a geofence type (circle, polygon)`);
  });
  const compiled: CompiledGeofencesInternal = { size: list.length, [FENCES]: { circles: Float64Array.from(circles), polygons } };
  return Object.freeze(compiled);
}

function insidePolygon(p: Polygon, lat: number, lonIn: number, accuracy: number): boolean {
  if (lat < p.minLat || lat > p.maxLat) return false;
  const lon = p.midLon + wrap180(lonIn - p.midLon);
  if (lon < p.minLon || lon > p.maxLon) return false;
  const ys = p.lat;
  const xs = p.lon;
  const n = ys.length;
  let inside = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const yi = ys[i]!;
    const yj = ys[j]!;
    if (yi > lat !== yj > lat && lon < ((xs[j]! - xs[i]!) * (lat - yi)) / (yj - yi) + xs[i]!) inside = !inside;
  }
  if (!inside || accuracy === 0) return inside;
  // Every edge at least `accuracy` away, in metres around the point.
  const kx = METRES_PER_DEGREE * Math.cos(lat * RAD);
  const limit = accuracy * accuracy;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const ax = (xs[j]! - lon) * kx;
    const ay = (ys[j]! - lat) * METRES_PER_DEGREE;
    const dx = (xs[i]! - lon) * kx - ax;
    const dy = (ys[i]! - lat) * METRES_PER_DEGREE - ay;
    const length2 = dx * dx + dy * dy;
    const t = length2 > 0 ? Math.min(1, Math.max(0, -(ax * dx + ay * dy) / length2)) : 0;
    const cx = ax + t * dx;
    const cy = ay + t * dy;
    if (cx * cx + cy * cy < limit) return false;
  }
  return true;
}

/**
 * Whether a reported location, with its whole uncertainty disc, is inside one of the geofences;
 * `bad_location` when the location cannot be used (see the file header).
 * @param maxAccuracyM the largest `accuracy_m` accepted (metres); Infinity for no limit.
 */
export function locationCheck(compiled: CompiledGeofences, loc: LocationFix | null | undefined, maxAccuracyM: number): LocationVerdict {
  if (typeof loc !== 'object' || loc === null) return 'bad_location';
  const lat = loc.latitude;
  const lon = loc.longitude;
  const accuracy = loc.accuracy_m;
  if (typeof lat !== 'number' || typeof lon !== 'number' || typeof accuracy !== 'number') return 'bad_location';
  if (!(lat >= -90 && lat <= 90) || !(lon >= -180 && lon <= 180)) return 'bad_location';
  if (!(accuracy >= 0 && accuracy < Infinity && accuracy <= maxAccuracyM)) return 'bad_location';
  const fences = (compiled as Partial<CompiledGeofencesInternal>)[FENCES];
  if (!fences) return 'outside';

  const { circles, polygons } = fences;
  if (circles.length > 0) {
    const latR = lat * RAD;
    const lonR = lon * RAD;
    const cosLat = Math.cos(latR);
    for (let i = 0; i < circles.length; i += 4) {
      const dLat = latR - circles[i]!;
      const room = circles[i + 3]! - accuracy;
      // The distance is at least the north-south one: skip far circles without trigonometry.
      if (room < 0 || Math.abs(dLat) * EARTH_RADIUS_M > room) continue;
      const sLat = Math.sin(dLat / 2);
      const sLon = Math.sin((lonR - circles[i + 1]!) / 2);
      const h = sLat * sLat + cosLat * circles[i + 2]! * sLon * sLon;
      if (2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h))) <= room) return 'inside';
    }
  }
  for (let k = 0; k < polygons.length; k++) {
    if (insidePolygon(polygons[k]!, lat, lon, accuracy)) return 'inside';
  }
  return 'outside';
}
