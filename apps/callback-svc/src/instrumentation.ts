// Preloaded with `node --require`: OpenTelemetry must patch http, undici and pg before they load.
import { startTelemetry } from '@dw/telemetry';

// Not amqplib: each delivery records its own "callback deliver" span, continued from the message's
// traceparent, and a retry carries that traceparent on; the library's consumer span beside it only
// repeated it, at about a tenth of the process's CPU per delivery (profiled during a drain).
startTelemetry('callback-svc', { without: ['amqplib'] });
