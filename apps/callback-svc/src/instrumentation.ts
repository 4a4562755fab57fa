// Preloaded with `node --require`: OpenTelemetry must patch http, undici, pg and amqplib before they load.
import { startTelemetry } from '@dw/telemetry';

startTelemetry('callback-svc');
