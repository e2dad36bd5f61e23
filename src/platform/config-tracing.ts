/**
 * OpenTelemetry traces: the standard OTEL_* variables of the OpenTelemetry SDK configuration
 * that Strongroom honours (docs/operations.md "Traces"). Read by config.ts, the only module that
 * reads the environment; the SDK is handed these values and never reads the environment itself
 * for them. Off unless an OTLP endpoint is named (or OTEL_TRACES_EXPORTER=otlp asks for the
 * default one); OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns it off whatever else
 * is set. Header values (a collector's API key) are never logged nor echoed in a problem.
 */

export const SAMPLERS = ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export interface TracingConfig {
  /** Where spans go (OTLP over HTTP, JSON encoding). Undefined: tracing is off and the SDK is never loaded. */
  exporter: { url: string; headers: Readonly<Record<string, string>>; timeoutMs: number; compression: 'gzip' | 'none' } | undefined;
  /** OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES, else `strongroom`. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, `service.name` aside. */
  resourceAttributes: Readonly<Record<string, string>>;
  sampler: SamplerName;
  /** OTEL_TRACES_SAMPLER_ARG: the fraction of traces the `*traceidratio` samplers keep. */
  samplerRatio: number;
  /** OTEL_PROPAGATORS names `tracecontext` (the default): an incoming W3C `traceparent` continues the caller's trace. */
  acceptTraceparent: boolean;
}

type Opt = (name: string) => string | undefined;

/** The OTLP/HTTP default when OTEL_TRACES_EXPORTER=otlp names no endpoint. */
const DEFAULT_ENDPOINT = 'http://localhost:4318/v1/traces';

/**
 * `key=value,key=value` with percent-encoded values (the W3C Baggage form the specification
 * uses for OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES). A problem names the
 * variable and the entry's position, never its value.
 */
export function parseKeyValues(name: string, raw: string | undefined, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  (raw ?? '').split(',').forEach((entry, i) => {
    if (entry.trim() === '') return;
    const eq = entry.indexOf('=');
    const key = eq <= 0 ? '' : entry.slice(0, eq).trim();
    let value: string | undefined;
    try {
      value = eq <= 0 ? undefined : decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      value = undefined;
    }
    if (key === '' || value === undefined || !/^[\x21-\x7e]+$/.test(key)) problems.push(`${name}: entry ${i + 1} must be key=value (the value percent-encoded)`);
    else out[key] = value;
  });
  return out;
}

function boolean(opt: Opt, name: string, problems: string[]): boolean {
  const raw = opt(name)?.trim().toLowerCase();
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  problems.push(`${name} must be true or false (got "${raw}")`);
  return false;
}

/** The traces endpoint: the signal's own URL as given, or the base endpoint with `v1/traces` appended. */
function endpoint(opt: Opt, problems: string[]): string | undefined {
  const own = opt('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = opt('OTEL_EXPORTER_OTLP_ENDPOINT');
  const name = own !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const raw = own ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw) || !['http:', 'https:'].includes(new URL(raw).protocol)) {
    problems.push(`${name} must be an http(s) URL such as http://otel-collector:4318 (the value given does not parse)`);
    return undefined;
  }
  return raw;
}

/** The traces' own variable when set, else the general one: the name read and its value. */
const either = (opt: Opt, traces: string, general: string): [string, string | undefined] => {
  const own = opt(traces);
  return own !== undefined ? [traces, own] : [general, opt(general)];
};

function exporter(opt: Opt, problems: string[]): TracingConfig['exporter'] {
  const names = (opt('OTEL_TRACES_EXPORTER') ?? 'otlp').split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  const unknown = names.filter((e) => e !== 'otlp' && e !== 'none');
  if (unknown.length > 0) problems.push(`OTEL_TRACES_EXPORTER must be otlp or none (got ${unknown.map((e) => `"${e}"`).join(', ')}; spans go out over OTLP/HTTP only)`);
  const url = endpoint(opt, problems);
  const disabled = boolean(opt, 'OTEL_SDK_DISABLED', problems);
  if (disabled || names.includes('none') || unknown.length > 0) return undefined;
  if (url === undefined && opt('OTEL_TRACES_EXPORTER') === undefined) return undefined; // nothing asked for tracing
  const [protocolVar, protocol] = either(opt, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol !== undefined && protocol !== 'http/json') problems.push(`${protocolVar} must be http/json (got "${protocol}"): spans are sent as OTLP/HTTP with JSON bodies, which an OpenTelemetry Collector accepts on its HTTP port (4318)`);
  const [timeoutVar, timeout] = either(opt, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT');
  const timeoutMs = timeout === undefined ? 10_000 : Number(timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 120_000) problems.push(`${timeoutVar} must be a whole number of milliseconds from 100 to 120000 (got "${timeout}")`);
  const [compressionVar, compression = 'none'] = either(opt, 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'OTEL_EXPORTER_OTLP_COMPRESSION');
  if (compression !== 'gzip' && compression !== 'none') problems.push(`${compressionVar} must be gzip or none (got "${compression}")`);
  const headers = { ...parseKeyValues('OTEL_EXPORTER_OTLP_HEADERS', opt('OTEL_EXPORTER_OTLP_HEADERS'), problems), ...parseKeyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', opt('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), problems) };
  return Object.freeze({ url: url ?? DEFAULT_ENDPOINT, headers: Object.freeze(headers), timeoutMs, compression: compression === 'gzip' ? 'gzip' : 'none' });
}

function sampler(opt: Opt, problems: string[]): { sampler: SamplerName; samplerRatio: number } {
  const name = (opt('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').trim().toLowerCase();
  const known = (SAMPLERS as readonly string[]).includes(name);
  if (!known) problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')} (got "${name}")`);
  const arg = opt('OTEL_TRACES_SAMPLER_ARG');
  const ratio = arg === undefined ? 1 : Number(arg);
  if (arg !== undefined && name.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) problems.push(`OTEL_TRACES_SAMPLER_ARG must be a fraction from 0 to 1 such as 0.25 (got "${arg}")`);
  return { sampler: known ? (name as SamplerName) : 'parentbased_always_on', samplerRatio: ratio >= 0 && ratio <= 1 ? ratio : 1 };
}

/** OTEL_PROPAGATORS: `tracecontext` (and `baggage`, accepted and not used) or `none`. */
function acceptTraceparent(opt: Opt, problems: string[]): boolean {
  const names = (opt('OTEL_PROPAGATORS') ?? 'tracecontext,baggage').split(',').map((p) => p.trim().toLowerCase()).filter((p) => p !== '');
  const unknown = names.filter((p) => !['tracecontext', 'baggage', 'none'].includes(p));
  if (unknown.length > 0) problems.push(`OTEL_PROPAGATORS may name tracecontext, baggage or none (got ${unknown.map((p) => `"${p}"`).join(', ')}): only W3C Trace Context is read`);
  return names.includes('tracecontext') && !names.includes('none');
}

export function readTracingEnv(opt: Opt, problems: string[]): TracingConfig {
  const { 'service.name': named, ...resourceAttributes } = parseKeyValues('OTEL_RESOURCE_ATTRIBUTES', opt('OTEL_RESOURCE_ATTRIBUTES'), problems);
  return Object.freeze({
    exporter: exporter(opt, problems),
    serviceName: opt('OTEL_SERVICE_NAME') ?? named ?? 'strongroom',
    resourceAttributes: Object.freeze(resourceAttributes),
    ...sampler(opt, problems),
    acceptTraceparent: acceptTraceparent(opt, problems),
  });
}
