/**
 * Great-circle distance and travel speed between two located sign-ins, for `impossible_travel`.
 * Geolocation by address is approximate: each place counts with its database's accuracy radius
 * (the distance shrinks by both radii), so two addresses of one city whose database places them
 * 40 km apart are not a journey.
 */

/** Mean Earth radius (IUGG), kilometres. */
const EARTH_RADIUS_KM = 6371.0088;

/** The radius a place counts with when its database gives none (DB-IP gives none; GeoLite2 does). */
export const DEFAULT_ACCURACY_KM = 50;

/**
 * Below this elapsed time the speed is computed over this time: two sign-ins in the same second
 * would otherwise be an infinite speed whatever the distance. A minute keeps any real journey
 * (hundreds of kilometres) far above any bound.
 */
export const MIN_ELAPSED_MS = 60_000;

export interface Place {
  latitude: number;
  longitude: number;
  /** The database's accuracy radius, km (undefined: DEFAULT_ACCURACY_KM). */
  accuracyKm?: number | null;
}

const rad = (deg: number): number => (deg * Math.PI) / 180;

/** Haversine distance in km (accurate to about 0.5% on the sphere; geolocation is far coarser). */
export function greatCircleKm(a: Pick<Place, 'latitude' | 'longitude'>, b: Pick<Place, 'latitude' | 'longitude'>): number {
  const dLat = rad(b.latitude - a.latitude);
  const dLon = rad(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

export interface Travel {
  /** The great-circle distance, km. */
  distanceKm: number;
  /** The distance less both accuracy radii (never below 0): what the speed is computed on. */
  certainKm: number;
  elapsedMs: number;
  /** `certainKm` over the elapsed time (at least MIN_ELAPSED_MS), km/h. */
  speedKmh: number;
}

/** The journey from `from` (at `fromAt`) to `to` (at `toAt`), Unix ms. */
export function travel(from: Place, fromAt: number, to: Place, toAt: number): Travel {
  const distanceKm = greatCircleKm(from, to);
  const slack = (from.accuracyKm ?? DEFAULT_ACCURACY_KM) + (to.accuracyKm ?? DEFAULT_ACCURACY_KM);
  const certainKm = Math.max(0, distanceKm - slack);
  const elapsedMs = Math.max(0, toAt - fromAt);
  const speedKmh = certainKm / (Math.max(elapsedMs, MIN_ELAPSED_MS) / 3_600_000);
  return { distanceKm, certainKm, elapsedMs, speedKmh };
}
