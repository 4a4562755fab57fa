// Preloaded with `node --require`: OpenTelemetry must patch http before it loads.
import { applyServiceV8Flags } from '@dw/config/v8-flags';
import { startTelemetry } from '@dw/telemetry';

applyServiceV8Flags();

// Not undici: the gateway's server span is the trace's gateway step, and forwarding.ts writes its
// traceparent on the forwarded request itself. The library's client span beside it (one more span
// per request, the upstream's server span already times the call) cost a span's recording and the
// instrumentation's hooks on every request (docs/decisions.md).
startTelemetry('api-gateway', { without: ['undici'] });
