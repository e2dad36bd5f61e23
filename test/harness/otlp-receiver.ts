/**
 * A stand-in for an OpenTelemetry Collector's OTLP/HTTP receiver: a node:http server on loopback
 * that accepts `POST /v1/traces` with a JSON `ExportTraceServiceRequest` (what
 * @opentelemetry/exporter-trace-otlp-http sends), answers `{}` as a collector does, and keeps
 * every span, flattened with its resource, and the headers of every export request. Anything
 * else is answered 404 (a wrong path) or 415 (not JSON) and recorded in `refused`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean | null | AttributeValue[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startNs: bigint;
  endNs: bigint;
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, AttributeValue>;
  scope: string;
}

export interface OtlpReceiver {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (the exporter appends /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** The headers of every accepted export request. */
  exports: http.IncomingHttpHeaders[];
  refused: Array<{ path: string; status: number }>;
  close(): Promise<void>;
}

interface OtlpValue { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } }
interface OtlpKeyValue { key: string; value: OtlpValue }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpKeyValue[]; status?: { code?: number }; startTimeUnixNano: string | number; endTimeUnixNano: string | number }
interface OtlpRequest { resourceSpans?: Array<{ resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }> }> }

function value(v: OtlpValue): AttributeValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(value);
  return null;
}

const attributes = (list: OtlpKeyValue[] = []): Record<string, AttributeValue> => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));

function flatten(body: OtlpRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => (rs.scopeSpans ?? []).flatMap((ss) => (ss.spans ?? []).map((s) => ({
    traceId: s.traceId, spanId: s.spanId, ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}), name: s.name, kind: s.kind,
    attributes: attributes(s.attributes), statusCode: s.status?.code ?? 0,
    startNs: BigInt(s.startTimeUnixNano), endNs: BigInt(s.endTimeUnixNano),
    resource: attributes(rs.resource?.attributes), scope: ss.scope?.name ?? '',
  }))));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { endpoint: '', spans: [], exports: [], refused: [], close: () => new Promise((resolve) => server.close(() => resolve())) };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const refuse = (status: number) => {
        receiver.refused.push({ path: req.url ?? '', status });
        res.writeHead(status).end();
      };
      if (req.method !== 'POST' || req.url !== '/v1/traces') return refuse(404);
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return refuse(415);
      receiver.exports.push(req.headers);
      receiver.spans.push(...flatten(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
