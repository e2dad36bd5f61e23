/** The geofence canvas's arithmetic: the view that fits the shapes, a graticule step, a circle's size in degrees. Pure. */
import type { Geofence } from './types.js';

/** Metres in a degree of latitude (the server's earth radius, src/access/rules/geo.ts). */
export const METRES_PER_DEGREE = (6_371_008.8 * Math.PI) / 180;

/** A view of the plane: its centre and its height in degrees of latitude (its width is twice that). */
export interface View {
  lat: number;
  lon: number;
  span: number;
}

export const WORLD: View = { lat: 0, lon: 0, span: 180 };
const MIN_SPAN = 0.002;

/** A circle's half-width and half-height in degrees of longitude and latitude. */
export function circleRadii(lat: number, radiusM: number): { rx: number; ry: number } {
  const ry = radiusM / METRES_PER_DEGREE;
  return { rx: ry / Math.max(0.01, Math.cos((lat * Math.PI) / 180)), ry };
}

/** The view that shows every shape with a margin; the world without any. */
export function fit(shapes: readonly Geofence[]): View {
  const lats: number[] = [];
  const lons: number[] = [];
  for (const s of shapes) {
    if (s.type === 'circle') {
      const { rx, ry } = circleRadii(s.lat, s.radius_m);
      lats.push(s.lat - ry, s.lat + ry);
      lons.push(s.lon - rx, s.lon + rx);
    } else for (const [lat, lon] of s.points) { lats.push(lat); lons.push(lon); }
  }
  if (lats.length === 0) return WORLD;
  const [south, north, west, east] = [Math.min(...lats), Math.max(...lats), Math.min(...lons), Math.max(...lons)];
  const span = Math.min(180, Math.max(MIN_SPAN, (north - south) * 1.4, ((east - west) / 2) * 1.4));
  return { lat: (north + south) / 2, lon: (east + west) / 2, span };
}

/** A round step for graticule lines: four to ten across the view's height. */
export function graticuleStep(span: number): number {
  for (const step of [30, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002, 0.0001]) if (span / step >= 4) return step;
  return 0.0001;
}

/** The multiples of `step` in [from, to]. */
export function ticks(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let k = Math.ceil(from / step); k * step <= to; k++) out.push(Number((k * step).toFixed(6)));
  return out;
}

export const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
