// Preloaded with `node --require`: OpenTelemetry must patch http and undici before they load.
import { startTelemetry } from '@dw/telemetry';

startTelemetry('ui');
