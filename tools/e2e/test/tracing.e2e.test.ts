/**
 * What an SRE sees in Jaeger, from the four real processes exporting OTLP/HTTP to a collector of
 * the test's own: one create is one trace, from the gateway through transactions-svc and the
 * outbox relay's publish to every callback attempt, and a delivery that gives up is an error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { api, eventually, startStack, type Merchant, type Stack } from './support/stack';

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
};
type Export = { resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
type Collected = OtlpSpan & { service: string };

// OTLP's SpanKind and StatusCode numbers.
const KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;
const STATUS_ERROR = 2;

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? value?.boolValue : Number(value.intValue));
};

let stack: Stack;
let merchant: Merchant;
let collector: http.Server;
let receiver: CallbackReceiver;
const spans: Collected[] = [];

beforeAll(async () => {
  collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        for (const resource of (JSON.parse(body) as Export).resourceSpans) {
          const service = String(resource.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue);
          for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  receiver = await startCallbackReceiver();
  receiver.respond = () => 500;
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  stack = await startStack('tracing', {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    CALLBACK_RETRY_DELAYS_MS: '100,100,100,100,100',
  });
  merchant = stack.createMerchant('Traced merchant');
  expect((await api(stack, merchant.apiToken)('PUT', '/api/updateCallbackUrlDeposit', { url: `${receiver.url}/cb` })).status).toBe(200);
});

afterAll(async () => {
  await stack?.close();
  collector?.close();
  await receiver?.close();
});

describe('one create, one trace', () => {
  it('joins the client, the gateway, transactions-svc, the relay and every callback attempt; the delivery that gives up is an error', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const created = await api(stack, merchant.apiToken)(
      'POST',
      '/api/createDeposit',
      { amount: '5.00', currency: 'USD', orderId: 'traced-1' },
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    expect(created.status).toBe(201);
    await receiver.waitFor(6);
    const inTrace = () => spans.filter((s) => s.traceId === traceId);
    const deliveries = await eventually(
      () => inTrace().filter((s) => s.name === 'callback deliver'),
      (found) => found.length >= 6,
    );

    const byService = (service: string, kind: number) => inTrace().filter((s) => s.service === service && s.kind === kind);
    // Server spans are named by route, with http.route, so Jaeger's operation list tells routes apart.
    for (const service of ['api-gateway', 'transactions-svc']) {
      const creates = byService(service, KIND.SERVER).filter((s) => attribute(s, 'http.route') === '/api/createDeposit');
      expect(creates.map((s) => s.name)).toEqual(['POST /api/createDeposit']);
    }
    const publish = byService('transactions-svc', KIND.PRODUCER);
    expect(publish).toHaveLength(1);
    expect(attribute(publish[0]!, 'messaging.operation.name')).toBe('publish');

    const ordered = deliveries.sort((a, b) => Number(attribute(a, 'callback.attempt')) - Number(attribute(b, 'callback.attempt')));
    expect(ordered.map((s) => attribute(s, 'callback.attempt'))).toEqual([1, 2, 3, 4, 5, 6]);
    for (const span of ordered) {
      expect(span.service).toBe('callback-svc');
      expect(span.kind).toBe(KIND.CONSUMER);
      expect(attribute(span, 'merchant.id')).toBe(merchant.merchantId);
      expect(attribute(span, 'messaging.system')).toBe('rabbitmq');
      // OpenTelemetry's messaging semantic conventions (1.x current): operation name and the
      // broker's delivery tag of the message this attempt processed.
      expect(attribute(span, 'messaging.operation.name')).toBe('process');
      expect(typeof attribute(span, 'messaging.rabbitmq.message.delivery_tag')).toBe('number');
      const posts = inTrace().filter((s) => s.parentSpanId === span.spanId && s.kind === KIND.CLIENT);
      expect(posts).toHaveLength(1);
      expect(posts[0]!.status?.code).toBe(STATUS_ERROR); // HTTP 500 is a failed attempt
    }
    expect(ordered[0]!.parentSpanId).toBe(publish[0]!.spanId);
    expect(ordered.slice(0, 5).map((s) => [attribute(s, 'callback.delivery_status'), s.status?.code ?? 0])).toEqual(Array(5).fill(['retrying', 0]));
    expect(attribute(ordered[5]!, 'callback.delivery_status')).toBe('failed');
    expect(ordered[5]!.status?.code).toBe(STATUS_ERROR);
    expect(ordered[5]!.status?.message).toMatch(/no attempts left/);
  });
});
