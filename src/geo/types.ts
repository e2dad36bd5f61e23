/** What the geolocation capability answers about a client address. */

/** A place: the country always; the network and the city when the operator's databases have them. */
export interface GeoPlace {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  /** Autonomous system number (the ASN database). */
  asn?: number;
  /** The autonomous system's organisation, as the ASN database names it. */
  as_org?: string;
  /** City name, in English when the database has it (the city database). */
  city?: string;
  latitude?: number;
  longitude?: number;
  /** The database's own accuracy radius in kilometres (GeoLite2 gives one; DB-IP does not). */
  accuracy_km?: number;
}

/** `{internal: true}`: a private, loopback, link-local, carrier-grade NAT or unique-local address, never a country. */
export type GeoLocation = Readonly<{ internal: true }> | Readonly<GeoPlace>;

/** What another capability needs to locate an address (the audit trail, later the risk signals). */
export interface GeoLookup {
  /** Never throws; null when the address is not an IP address or no database knows it. */
  lookup(ip: string): GeoLocation | null;
}
