// Preloaded with `node --require`: OpenTelemetry must patch http and pg before they load.
import { applyServiceV8Flags } from '@dw/config/v8-flags';
import { startTelemetry } from '@dw/telemetry';

applyServiceV8Flags();

// Not undici: callback-svc makes each callback's client span itself (send-callback.ts), and that
// span gives the merchant its traceparent; the library's instrumentation cost about a tenth of the
// process's CPU per callback (docs/decisions.md).
startTelemetry('callback-svc', { without: ['undici'] });
