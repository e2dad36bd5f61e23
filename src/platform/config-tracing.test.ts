import { describe, expect, it } from 'vitest';
import { readTracingEnv } from './config-tracing.js';

function read(env: Record<string, string>) {
  const problems: string[] = [];
  const config = readTracingEnv((n) => (env[n] === '' ? undefined : env[n]), problems);
  return { config, problems };
}

describe('the OTEL_* variables', () => {
  it('leave tracing off when no endpoint is named; the defaults otherwise', () => {
    expect(read({})).toEqual({
      config: { exporter: undefined, serviceName: 'strongroom', resourceAttributes: {}, sampler: 'parentbased_always_on', samplerRatio: 1, acceptTraceparent: true },
      problems: [],
    });
  });

  it('send to the base endpoint\'s /v1/traces, or to the traces endpoint as given; OTEL_TRACES_EXPORTER=otlp alone means the local default', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).config.exporter).toEqual({ url: 'http://collector:4318/v1/traces', headers: {}, timeoutMs: 10_000, compression: 'none' });
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b.example/custom/traces' }).config.exporter?.url).toBe('https://b.example/custom/traces');
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp' }).config.exporter?.url).toBe('http://localhost:4318/v1/traces');
  });

  it('are off whatever else is set with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).toMatchObject({ config: { exporter: undefined }, problems: [] });
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toMatchObject({ config: { exporter: undefined }, problems: [] });
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'false' }).config.exporter).toBeDefined();
  });

  it('read headers (the traces ones over the general ones, values percent-decoded), timeout, compression, service name and resource attributes', () => {
    const { config, problems } = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-tenant=bank',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=cards',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=ignored,deployment.environment.name=prod,service.namespace=auth',
      OTEL_SERVICE_NAME: 'strongroom-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(problems).toEqual([]);
    expect(config).toEqual({
      exporter: { url: 'http://c:4318/v1/traces', headers: { authorization: 'Bearer abc', 'x-tenant': 'cards' }, timeoutMs: 2500, compression: 'gzip' },
      serviceName: 'strongroom-eu', resourceAttributes: { 'deployment.environment.name': 'prod', 'service.namespace': 'auth' },
      sampler: 'parentbased_traceidratio', samplerRatio: 0.25, acceptTraceparent: true,
    });
    expect(read({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource' }).config.serviceName).toBe('from-resource');
  });

  it('OTEL_PROPAGATORS=none ignores an incoming traceparent; tracecontext and baggage are accepted', () => {
    expect(read({ OTEL_PROPAGATORS: 'none' }).config.acceptTraceparent).toBe(false);
    expect(read({ OTEL_PROPAGATORS: 'tracecontext,baggage' })).toMatchObject({ config: { acceptTraceparent: true }, problems: [] });
  });

  it('name each wrong value, never a header\'s value', () => {
    const { problems } = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url', OTEL_TRACES_EXPORTER: 'otlp,zipkin', OTEL_SDK_DISABLED: 'yes',
      OTEL_TRACES_SAMPLER: 'sometimes', OTEL_PROPAGATORS: 'b3', OTEL_EXPORTER_OTLP_HEADERS: 'api-key-without-equals-s3cr3t',
    });
    expect(problems).toEqual([
      'OTEL_TRACES_EXPORTER must be otlp or none (got "zipkin"; spans go out over OTLP/HTTP only)',
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL such as http://otel-collector:4318 (the value given does not parse)',
      'OTEL_SDK_DISABLED must be true or false (got "yes")',
      'OTEL_TRACES_SAMPLER must be one of parentbased_always_on, parentbased_always_off, parentbased_traceidratio, always_on, always_off, traceidratio (got "sometimes")',
      'OTEL_PROPAGATORS may name tracecontext, baggage or none (got "b3"): only W3C Trace Context is read',
    ]);
    const enabled = read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_HEADERS: 'api-key-without-equals-s3cr3t', OTEL_EXPORTER_OTLP_TIMEOUT: '0', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }).problems;
    expect(enabled).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/json (got "grpc"): spans are sent as OTLP/HTTP with JSON bodies, which an OpenTelemetry Collector accepts on its HTTP port (4318)',
      'OTEL_EXPORTER_OTLP_TIMEOUT must be a whole number of milliseconds from 100 to 120000 (got "0")',
      'OTEL_EXPORTER_OTLP_HEADERS: entry 1 must be key=value (the value percent-encoded)',
      'OTEL_TRACES_SAMPLER_ARG must be a fraction from 0 to 1 such as 0.25 (got "2")',
    ]);
    expect(enabled.join(' ')).not.toContain('s3cr3t');
  });
});
