import { describe, expect, it } from 'vitest';
import { InvalidRuleError } from './errors.js';
import { compileGeofences, EARTH_RADIUS_M, locationCheck, type Geofence, type LocationFix } from './geo.js';

/** Degrees of latitude for a distance in metres. */
const north = (m: number) => (m / (EARTH_RADIUS_M * Math.PI)) * 180;
/** Degrees of longitude for a distance in metres at a latitude. */
const east = (m: number, lat: number) => north(m) / Math.cos((lat * Math.PI) / 180);
const fix = (latitude: number, longitude: number, accuracy_m: number): LocationFix => ({ latitude, longitude, accuracy_m });

function invalid(list: unknown, field = 'geofences'): InvalidRuleError {
  try {
    compileGeofences(list as Geofence[], field);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRuleError);
    return err as InvalidRuleError;
  }
  throw new Error(`compiled: ${JSON.stringify(list)}`);
}

// A branch on Kenyatta Avenue, Nairobi.
const BRANCH = { lat: -1.28412, lon: 36.82329 };
const branch = compileGeofences([{ type: 'circle', lat: BRANCH.lat, lon: BRANCH.lon, radius_m: 150 }]);

describe('locationCheck: circles', () => {
  it('a Nairobi branch: inside when the whole accuracy disc is inside the circle', () => {
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon, 10), 100)).toBe('inside');
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon, 0), 100)).toBe('inside');
    expect(locationCheck(branch, fix(BRANCH.lat + north(100), BRANCH.lon, 49), 100)).toBe('inside'); // 100 + 49 ≤ 150
    expect(locationCheck(branch, fix(BRANCH.lat + north(100), BRANCH.lon, 51), 100)).toBe('outside'); // 100 + 51 > 150
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon + east(140, BRANCH.lat), 9.5), 100)).toBe('inside');
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon - east(140, BRANCH.lat), 10.5), 100)).toBe('outside');
    expect(locationCheck(branch, fix(BRANCH.lat - north(149.5), BRANCH.lon, 0), 100)).toBe('inside');
    expect(locationCheck(branch, fix(BRANCH.lat - north(150.5), BRANCH.lon, 0), 100)).toBe('outside');
    expect(locationCheck(branch, fix(-1.2921, 36.8219, 5), 100)).toBe('outside'); // the city centre, ~900 m away
  });

  it('an accuracy disc larger than the circle is never inside', () => {
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon, 151), 1000)).toBe('outside');
  });

  it('is inside when inside any fence', () => {
    const two = compileGeofences([
      { type: 'circle', lat: 0, lon: 0, radius_m: 100 },
      { type: 'circle', lat: BRANCH.lat, lon: BRANCH.lon, radius_m: 150 },
    ]);
    expect(two.size).toBe(2);
    expect(locationCheck(two, fix(BRANCH.lat, BRANCH.lon, 10), 100)).toBe('inside');
    expect(locationCheck(two, fix(0, 0, 10), 100)).toBe('inside');
    expect(locationCheck(two, fix(1, 1, 10), 100)).toBe('outside');
  });

  it('works at the poles and across the antimeridian', () => {
    const pole = compileGeofences([{ type: 'circle', lat: 90, lon: 0, radius_m: 1000 }]);
    expect(locationCheck(pole, fix(90 - north(556), 123, 100), 100)).toBe('inside'); // any longitude
    expect(locationCheck(pole, fix(90 - north(556), -170, 100), 100)).toBe('inside');
    expect(locationCheck(pole, fix(90 - north(1112), -45, 0), 100)).toBe('outside');
    expect(locationCheck(pole, fix(-90, 0, 0), 100)).toBe('outside');
    const south = compileGeofences([{ type: 'circle', lat: -90, lon: 45, radius_m: 500 }]);
    expect(locationCheck(south, fix(-90, -120, 10), 100)).toBe('inside');

    const fiji = compileGeofences([{ type: 'circle', lat: -17, lon: 179.999, radius_m: 500 }]);
    expect(locationCheck(fiji, fix(-17, -179.999, 10), 100)).toBe('inside'); // ~213 m east, across the line
    expect(locationCheck(fiji, fix(-17, 180, 10), 100)).toBe('inside');
    expect(locationCheck(fiji, fix(-17, -180, 10), 100)).toBe('inside');
    expect(locationCheck(fiji, fix(-17, -179.99, 10), 100)).toBe('outside'); // ~1.2 km
    expect(locationCheck(fiji, fix(-17, 0, 10), 100)).toBe('outside');
  });
});

describe('locationCheck: polygons', () => {
  // A square about 222 m a side around the branch.
  const d = 0.001;
  const square = compileGeofences([{ type: 'polygon', points: [[BRANCH.lat - d, BRANCH.lon - d], [BRANCH.lat - d, BRANCH.lon + d], [BRANCH.lat + d, BRANCH.lon + d], [BRANCH.lat + d, BRANCH.lon - d]] }]);
  const toEdge = (d * EARTH_RADIUS_M * Math.PI) / 180; // centre to each edge, metres (~111 m)

  it('is inside when the point is in and every edge is at least the accuracy away', () => {
    expect(locationCheck(square, fix(BRANCH.lat, BRANCH.lon, 0), 500)).toBe('inside');
    expect(locationCheck(square, fix(BRANCH.lat, BRANCH.lon, toEdge - 1), 500)).toBe('inside');
    expect(locationCheck(square, fix(BRANCH.lat, BRANCH.lon, toEdge + 1), 500)).toBe('outside');
    // 20 m inside the north edge.
    const nearEdge = BRANCH.lat + d - north(20);
    expect(locationCheck(square, fix(nearEdge, BRANCH.lon, 19.5), 500)).toBe('inside');
    expect(locationCheck(square, fix(nearEdge, BRANCH.lon, 20.5), 500)).toBe('outside');
    // Near the north-east corner, 20 m from both edges.
    expect(locationCheck(square, fix(nearEdge, BRANCH.lon + d - east(20, BRANCH.lat), 19.5), 500)).toBe('inside');
    expect(locationCheck(square, fix(nearEdge, BRANCH.lon + d - east(20, BRANCH.lat), 20.5), 500)).toBe('outside');
  });

  it('is outside beyond an edge, whatever the accuracy', () => {
    expect(locationCheck(square, fix(BRANCH.lat + d + north(1), BRANCH.lon, 0), 500)).toBe('outside');
    expect(locationCheck(square, fix(BRANCH.lat, BRANCH.lon - d - east(1, BRANCH.lat), 0), 500)).toBe('outside');
    expect(locationCheck(square, fix(0, 0, 0), 500)).toBe('outside');
  });

  it('follows a concave outline', () => {
    // An L: the notch at the top right is outside.
    const l = compileGeofences([{ type: 'polygon', points: [[0, 0], [0, 0.002], [0.001, 0.002], [0.001, 0.001], [0.002, 0.001], [0.002, 0]] }]);
    expect(locationCheck(l, fix(0.0005, 0.0015, 10), 100)).toBe('inside');
    expect(locationCheck(l, fix(0.0015, 0.0005, 10), 100)).toBe('inside');
    expect(locationCheck(l, fix(0.0015, 0.0015, 0), 100)).toBe('outside');
    // Inside, but 11 m from the inner corner's edges: a 20 m disc reaches into the notch.
    expect(locationCheck(l, fix(0.0009, 0.0011, 20), 100)).toBe('outside');
  });

  it('works across the antimeridian, and with a repeated closing point', () => {
    const across = compileGeofences([{ type: 'polygon', points: [[-17.1, 179.9], [-17.1, -179.9], [-16.9, -179.9], [-16.9, 179.9], [-17.1, 179.9]] }]);
    for (const lon of [180, -180, 179.95, -179.95]) expect(locationCheck(across, fix(-17, lon, 100), 500), String(lon)).toBe('inside');
    for (const lon of [179.85, -179.85, 0, 90, -90]) expect(locationCheck(across, fix(-17, lon, 0), 500), String(lon)).toBe('outside');
    // ~200 m from the east edge at −179.9 (the point is 0.002° ≈ 213 m west of it).
    expect(locationCheck(across, fix(-17, -179.902, 150), 500)).toBe('inside');
    expect(locationCheck(across, fix(-17, -179.902, 250), 500)).toBe('outside');
  });

  it('works up to ±85° and leaves points nearer the pole outside', () => {
    const north85 = compileGeofences([{ type: 'polygon', points: [[84.9, -1], [84.9, 1], [85, 1], [85, -1]] }]);
    expect(locationCheck(north85, fix(84.95, 0, 100), 500)).toBe('inside');
    expect(locationCheck(north85, fix(89.99, 0, 0), 500)).toBe('outside');
    expect(locationCheck(north85, fix(90, 0, 0), 500)).toBe('outside');
  });
});

describe('locationCheck: bad locations', () => {
  it('refuses missing, non-numeric, non-finite and out-of-range coordinates', () => {
    const bad: unknown[] = [
      null, undefined, 'here', {}, { latitude: BRANCH.lat, longitude: BRANCH.lon },
      fix(Number.NaN, BRANCH.lon, 10), fix(BRANCH.lat, Number.NaN, 10), fix(Infinity, BRANCH.lon, 10), fix(BRANCH.lat, -Infinity, 10),
      { latitude: '-1.28412', longitude: BRANCH.lon, accuracy_m: 10 }, { latitude: BRANCH.lat, longitude: '36.82329', accuracy_m: 10 },
      { latitude: BRANCH.lat, longitude: BRANCH.lon, accuracy_m: '10' }, { latitude: BRANCH.lat, longitude: BRANCH.lon, accuracy_m: null },
      fix(90.0001, 0, 10), fix(-90.0001, 0, 10), fix(0, 180.0001, 10), fix(0, -180.0001, 10),
    ];
    for (const loc of bad) expect(locationCheck(branch, loc as LocationFix, 100), JSON.stringify(loc)).toBe('bad_location');
  });

  it('refuses negative, infinite or NaN accuracy and accuracy worse than the limit (the limit itself is fine)', () => {
    for (const accuracy of [-1, -0.001, Infinity, Number.NaN, 100.001]) expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon, accuracy), 100), String(accuracy)).toBe('bad_location');
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon, 100), 100)).toBe('inside');
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon, 500), Infinity)).toBe('outside');
    expect(locationCheck(branch, fix(BRANCH.lat, BRANCH.lon, 10), Number.NaN)).toBe('bad_location');
  });

  it('says bad_location before looking at the fences', () => {
    expect(locationCheck(branch, fix(0, 0, 1000), 100)).toBe('bad_location');
  });

  it('accepts the edges of the coordinate ranges', () => {
    for (const [lat, lon] of [[90, 0], [-90, 0], [0, 180], [0, -180]] as const) expect(locationCheck(branch, fix(lat, lon, 10), 100)).toBe('outside');
  });
});

describe('compileGeofences: validation', () => {
  const circle = { type: 'circle', lat: BRANCH.lat, lon: BRANCH.lon, radius_m: 150 };

  it('refuses an empty list and non-lists', () => {
    expect(invalid([]).message).toMatch(/^geofences: must be a non-empty list/);
    expect(invalid(circle).field).toBe('geofences');
    expect(invalid(null, 'channels.branch.geofences').field).toBe('channels.branch.geofences');
  });

  it('refuses circles with bad coordinates or radius', () => {
    expect(invalid([circle, { ...circle, radius_m: 150_000 }]).message).toBe('geofences[1].radius_m: 150000 is not a radius in metres (more than 0, at most 100000)');
    for (const radius_m of [0, -1, Number.NaN, Infinity, '150', null, undefined, 100_000.5]) expect(invalid([{ ...circle, radius_m }]).field, String(radius_m)).toBe('geofences[0].radius_m');
    expect(compileGeofences([{ ...circle, radius_m: 100_000 } as Geofence]).size).toBe(1);
    for (const lat of [90.5, -91, Number.NaN, Infinity, '1', undefined]) expect(invalid([{ ...circle, lat }]).field, String(lat)).toBe('geofences[0].lat');
    for (const lon of [180.5, -181, Number.NaN, -Infinity, '36', null]) expect(invalid([{ ...circle, lon }]).field, String(lon)).toBe('geofences[0].lon');
    expect(invalid([{ ...circle, lat: 91 }]).message).toBe('geofences[0].lat: 91 is not a latitude (−90 to 90)');
  });

  it('refuses unknown types, unknown keys and non-objects', () => {
    expect(invalid([{ ...circle, type: 'square' }]).message).toBe('geofences[0].type: "square" is not a geofence type (circle, polygon)');
    expect(invalid([{ lat: 0, lon: 0, radius_m: 1 }]).field).toBe('geofences[0].type');
    expect(invalid([{ ...circle, radius: 150 }]).field).toBe('geofences[0].radius');
    expect(invalid([{ type: 'polygon', points: [[0, 0], [0, 1], [1, 1]], radius_m: 5 }]).field).toBe('geofences[0].radius_m');
    expect(invalid([circle, 'circle']).field).toBe('geofences[1]');
  });

  it('refuses polygons with too few or too many points, or bad points', () => {
    const polygon = (points: unknown) => [{ type: 'polygon', points }];
    expect(invalid(polygon([[0, 0], [0, 1]])).field).toBe('geofences[0].points');
    const many = Array.from({ length: 1001 }, (_, i) => [Math.sin((i / 1001) * 2 * Math.PI), Math.cos((i / 1001) * 2 * Math.PI)]);
    expect(invalid(polygon(many)).message).toContain('not 1001 points');
    expect(compileGeofences(polygon(many.slice(0, 1000)) as Geofence[]).size).toBe(1);
    expect(invalid(polygon('0,0 0,1 1,1')).field).toBe('geofences[0].points');
    expect(invalid(polygon([[0, 0], [0, 1], [1]])).field).toBe('geofences[0].points[2]');
    expect(invalid(polygon([[0, 0], [0, 1], [1, 1, 1]])).field).toBe('geofences[0].points[2]');
    expect(invalid(polygon([[0, 0], [0, 1], { lat: 1, lon: 1 }])).field).toBe('geofences[0].points[2]');
    expect(invalid(polygon([[0, 0], [Number.NaN, 1], [1, 1]])).field).toBe('geofences[0].points[1][0]');
    expect(invalid(polygon([[0, 0], [0, 181], [1, 1]])).field).toBe('geofences[0].points[1][1]');
  });

  it('refuses polygons beyond ±85°, without area, winding around a pole, or too wide', () => {
    const polygon = (points: unknown) => [{ type: 'polygon', points }];
    expect(invalid(polygon([[85.5, 0], [85.5, 1], [86, 1]])).message).toBe('geofences[0].points[0][0]: 85.5 is not a latitude (−85 to 85)');
    expect(invalid(polygon([[-89, 0], [-89, 1], [-88, 1]])).field).toBe('geofences[0].points[0][0]');
    expect(invalid(polygon([[0, 0], [1, 1], [2, 2]])).message).toContain('encloses no area');
    expect(invalid(polygon([[80, 0], [80, 120], [80, -120]])).message).toContain('winds around a pole');
    expect(invalid(polygon([[0, 0], [0, 180], [1, 180]])).message).toContain('spans 180° of longitude or more');
    expect(invalid(polygon([[0, -100], [0, 0], [0, 100], [5, 100], [5, 0], [5, -100]])).message).toBe('geofences[0].points: the polygon spans 180° of longitude or more');
  });
});
