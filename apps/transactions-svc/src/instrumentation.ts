// Preloaded with `node --require`: OpenTelemetry must patch http, pg and amqplib before they load.
import { startTelemetry } from '@dw/telemetry';

startTelemetry('transactions-svc');
