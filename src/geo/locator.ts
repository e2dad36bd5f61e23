/**
 * The locator: client address to country, network (ASN) and, with a city database, city and
 * coordinates, from the operator's MaxMind-format files held in memory. A lookup is a walk of
 * at most 128 tree nodes and a decoded record, both cached, so it costs about a microsecond
 * (docs/benchmarks.md "Geolocation"); it never throws and never waits.
 *
 * A file replaced on disk (moved over the old one, or rewritten) is loaded by the next
 * `refresh()` (a background job every few seconds), checked, and swapped in whole; a
 * replacement that does not load leaves the previous database answering and is reported once
 * (log, /health) until the file changes again.
 */
import { EventEmitter, once } from 'node:events';
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { GeoDatabaseKind, GeoDatabaseSource, GeoSetting } from '../platform/config-geo.js';
import { BUNDLED_GEO_PACKAGE } from '../platform/config-geo.js';
import { classifyAddress } from './addresses.js';
import { TwoGenerationCache } from './cache.js';
import { fileIdentity, GeoDatabaseError, loadDatabase, type LoadedDatabase } from './database.js';
import { countryOf, networkOf, placeOf } from './records.js';
import type { GeoLocation, GeoLookup, GeoPlace } from './types.js';

const DAY_MS = 86_400_000;
const INTERNAL: GeoLocation = Object.freeze({ internal: true as const });

export interface GeoLocatorOptions {
  sources: readonly GeoDatabaseSource[];
  /** Past this age (from the file's build date) a database is reported stale. */
  maxAgeDays: number;
  clock: Clock;
  log: Logger;
  /** Client addresses whose answers are kept (per generation; 0: none). */
  answerCacheSize?: number;
  /** Decoded records kept per database (per generation). */
  recordCacheSize?: number;
}

/** What one check of one file did: loaded a replacement, refused it, or found the file gone. */
export interface GeoReload {
  database: GeoDatabaseKind;
  setting: GeoSetting;
  outcome: 'reloaded' | 'failed' | 'missing';
  /** The build date of the database now answering. */
  built_at: string;
  reason?: string;
}

export interface GeoDatabaseStatus {
  database: GeoDatabaseKind;
  /** The setting that names the file (for the bundled one, the setting that replaces it). */
  setting: GeoSetting;
  source: 'operator' | 'bundled';
  /** The metadata's database_type. */
  type: string;
  build_date: string;
  age_days: number;
  stale: boolean;
}

export interface GeoHealth {
  /** `warning`: read `warnings`; geolocation still answers (never an outage). */
  status: 'ok' | 'warning';
  max_age_days: number;
  databases: GeoDatabaseStatus[];
  warnings: string[];
}

const day = (d: Date): string => d.toISOString().slice(0, 10);

export class GeoLocator implements GeoLookup {
  private readonly loaded = new Map<GeoDatabaseKind, LoadedDatabase>();
  /** A replacement that did not load (or a file that went missing), per database: reported once, retried when the file changes again. */
  private readonly refused = new Map<GeoDatabaseKind, { identity: string; reason: string }>();
  /** Databases whose reads threw (a corrupt tree): logged once per loaded file. */
  private readonly readErrors = new Set<string>();
  private readonly answers: TwoGenerationCache<string, GeoLocation | null>;
  private readonly events = new EventEmitter();
  private refreshing: Promise<GeoReload[]> | undefined;

  constructor(private readonly o: GeoLocatorOptions) {
    this.answers = new TwoGenerationCache(o.answerCacheSize ?? 4096);
  }

  /** Loads every configured file; throws a GeoDatabaseError (setting, path, why) for the first that cannot be used. */
  async load(): Promise<void> {
    for (const source of this.o.sources) this.loaded.set(source.kind, await loadDatabase(source, this.o.recordCacheSize ?? 2048));
    this.answers.clear();
  }

  lookup(ip: string): GeoLocation | null {
    const cached = this.answers.get(ip);
    if (cached !== undefined) return cached;
    const answer = this.resolve(ip);
    this.answers.set(ip, answer);
    return answer;
  }

  private resolve(ip: string): GeoLocation | null {
    const address = classifyAddress(ip);
    if (address === null) return null;
    if (address.internal) return INTERNAL;
    const city = this.read('city', address.lookup);
    // A city database answers country too; the country database fills in where it has no record.
    const country = countryOf(city) ?? countryOf(this.read('country', address.lookup));
    if (country === undefined) return null;
    const place: GeoPlace = { country, ...networkOf(this.read('asn', address.lookup)), ...placeOf(city) };
    return Object.freeze(place);
  }

  private read(kind: GeoDatabaseKind, ip: string): unknown {
    const db = this.loaded.get(kind);
    if (!db || (db.ipVersion === 4 && ip.includes(':'))) return null;
    try {
      return db.reader.get(ip);
    } catch (err) {
      // A tree that points outside the file: answer nothing rather than fail the request.
      if (!this.readErrors.has(db.identity)) {
        this.readErrors.add(db.identity);
        this.o.log.error({ err, database: kind, setting: db.source.setting, path: db.source.path }, `Geolocation: the ${kind} database could not answer a lookup (a corrupt file?); replace it. Its lookups answer nothing until then.`);
      }
      return null;
    }
  }

  /** Checks each file once; loads the ones replaced since. Concurrent calls share one check. */
  refresh(): Promise<GeoReload[]> {
    this.refreshing ??= this.check().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async check(): Promise<GeoReload[]> {
    const done: GeoReload[] = [];
    for (const current of this.loaded.values()) {
      const r = await this.checkOne(current);
      if (r) done.push(r);
    }
    if (done.some((r) => r.outcome === 'reloaded')) this.answers.clear();
    for (const r of done) this.events.emit('reload', r);
    return done;
  }

  private async checkOne(current: LoadedDatabase): Promise<GeoReload | undefined> {
    const { source } = current;
    let identity: string;
    try {
      identity = await fileIdentity(source.path);
    } catch {
      identity = 'missing';
    }
    if (identity === current.identity) {
      this.refused.delete(source.kind); // the file answering is back in place
      return undefined;
    }
    if (identity === this.refused.get(source.kind)?.identity) return undefined;
    const base = { database: source.kind, setting: source.setting };
    if (identity === 'missing') {
      const reason = 'the file is gone; the copy in memory still answers';
      this.refused.set(source.kind, { identity, reason });
      this.o.log.warn({ database: source.kind, setting: source.setting, path: source.path }, `Geolocation: ${source.setting} ${source.path}: ${reason}`);
      return { ...base, outcome: 'missing', built_at: current.builtAt.toISOString(), reason };
    }
    try {
      const next = await loadDatabase(source, this.o.recordCacheSize ?? 2048);
      this.loaded.set(source.kind, next);
      this.refused.delete(source.kind);
      this.o.log.info({ database: source.kind, setting: source.setting, type: next.type, built: next.builtAt.toISOString() }, `Geolocation: reloaded the ${source.kind} database (${next.type}, built ${day(next.builtAt)}) from ${source.path}`);
      return { ...base, outcome: 'reloaded', built_at: next.builtAt.toISOString() };
    } catch (err) {
      const reason = err instanceof GeoDatabaseError ? err.reason : String(err);
      this.refused.set(source.kind, { identity, reason });
      this.o.log.error({ database: source.kind, setting: source.setting, path: source.path }, `Geolocation: ${source.setting} ${source.path} was replaced but ${reason}; still answering from the database built ${day(current.builtAt)}`);
      return { ...base, outcome: 'failed', built_at: current.builtAt.toISOString(), reason };
    }
  }

  /** Resolves with the next check's outcome for a replaced (or vanished) file. */
  async nextReload(): Promise<GeoReload> {
    const [r] = (await once(this.events, 'reload')) as [GeoReload];
    return r;
  }

  /** Each loaded database and its age in seconds now (for /metrics). */
  ages(): Array<{ database: GeoDatabaseKind; seconds: number }> {
    const now = this.o.clock.now();
    return [...this.loaded.values()].map((d) => ({ database: d.source.kind, seconds: Math.round((now - d.builtAt.getTime()) / 1000) }));
  }

  /** For /health and start-up: which databases answer, how old they are, and what to do about them. */
  health(): GeoHealth {
    const { databases, notes } = this.survey();
    return { status: notes.length > 0 ? 'warning' : 'ok', max_age_days: this.o.maxAgeDays, databases, warnings: notes.map((n) => n.text) };
  }

  /** Each database's status, and the warnings, each marked when it is about the bundled development copy. */
  survey(): { databases: GeoDatabaseStatus[]; notes: Array<{ text: string; bundled: boolean }> } {
    const now = this.o.clock.now();
    const notes: Array<{ text: string; bundled: boolean }> = [];
    const databases = [...this.loaded.values()].map((d): GeoDatabaseStatus => {
      const { kind, setting, bundled } = d.source;
      const ageDays = Math.floor((now - d.builtAt.getTime()) / DAY_MS);
      const stale = now - d.builtAt.getTime() > this.o.maxAgeDays * DAY_MS;
      if (bundled) {
        notes.push({ bundled, text: `The ${kind} database is the development copy bundled from the npm package ${BUNDLED_GEO_PACKAGE} (NRO data, CC BY 4.0), which is no longer updated and has known data errors: set GEOIP_COUNTRY_DB or GEOIP_CITY_DB (and GEOIP_ASN_DB) to current DB-IP Lite or GeoLite2 files.` });
      }
      const who = bundled ? `The bundled ${kind} database` : `${setting}: the ${kind} database`;
      if (stale) notes.push({ bundled, text: `${who} (${d.type}) was built on ${day(d.builtAt)}, ${ageDays} days ago, more than GEOIP_MAX_AGE_DAYS (${this.o.maxAgeDays}): replace the file with a current one (it is reloaded without a restart).` });
      const refused = this.refused.get(kind);
      if (refused) notes.push({ bundled, text: `${setting}: the file on disk was not loaded (${refused.reason}); the database built on ${day(d.builtAt)} still answers.` });
      return { database: kind, setting, source: bundled ? 'bundled' : 'operator', type: d.type, build_date: d.builtAt.toISOString(), age_days: ageDays, stale };
    });
    return { databases, notes };
  }
}
