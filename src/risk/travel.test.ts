import { describe, expect, it } from 'vitest';
import { DEFAULT_ACCURACY_KM, greatCircleKm, MIN_ELAPSED_MS, travel } from './travel.js';

const NAIROBI = { latitude: -1.2864, longitude: 36.8172 };
const LISBON = { latitude: 38.7223, longitude: -9.1393 };
const MOMBASA = { latitude: -4.0435, longitude: 39.6682 };

describe('great-circle distance', () => {
  it('Nairobi to Lisbon is about 6,460 km, the same both ways', () => {
    expect(Math.round(greatCircleKm(NAIROBI, LISBON))).toBe(6_462);
    expect(greatCircleKm(LISBON, NAIROBI)).toBeCloseTo(greatCircleKm(NAIROBI, LISBON), 9);
  });

  it('a place to itself is 0; antipodes are half the circumference', () => {
    expect(greatCircleKm(NAIROBI, NAIROBI)).toBe(0);
    expect(Math.round(greatCircleKm({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 180 }))).toBe(20_015);
  });
});

describe('travel speed', () => {
  it('Nairobi (20 km) to Lisbon (50 km) in 20 minutes: the distance less both radii, over a third of an hour', () => {
    const t = travel({ ...NAIROBI, accuracyKm: 20 }, 0, { ...LISBON, accuracyKm: 50 }, 20 * 60_000);
    expect(Math.round(t.certainKm)).toBe(6_462 - 70);
    expect(t.elapsedMs).toBe(20 * 60_000);
    expect(Math.round(t.speedKmh)).toBe(Math.round((t.distanceKm - 70) * 3));
  });

  it('a database without radii counts DEFAULT_ACCURACY_KM for each place', () => {
    const t = travel(NAIROBI, 0, MOMBASA, 3_600_000);
    expect(t.certainKm).toBeCloseTo(t.distanceKm - 2 * DEFAULT_ACCURACY_KM, 9);
  });

  it('two places within their radii are no journey at all', () => {
    const t = travel({ latitude: -1.28, longitude: 36.82, accuracyKm: 100 }, 0, { latitude: -1.0, longitude: 37.0, accuracyKm: 100 }, 1000);
    expect(t.certainKm).toBe(0);
    expect(t.speedKmh).toBe(0);
  });

  it('sign-ins in the same instant are timed over at least a minute, never an infinite speed', () => {
    const t = travel(NAIROBI, 5000, MOMBASA, 5000);
    expect(t.elapsedMs).toBe(0);
    expect(t.speedKmh).toBeCloseTo(t.certainKm / (MIN_ELAPSED_MS / 3_600_000), 9);
    expect(Number.isFinite(t.speedKmh)).toBe(true);
  });
});
