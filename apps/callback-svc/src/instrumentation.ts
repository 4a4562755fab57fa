// Preloaded with `node --require`: OpenTelemetry must patch http, undici and pg before they load.
import { startTelemetry } from '@dw/telemetry';

startTelemetry('callback-svc');
