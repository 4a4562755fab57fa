// Preloaded with `node --require`: OpenTelemetry must patch http and undici before they load.
import { applyServiceV8Flags } from '@dw/config/v8-flags';
import { startTelemetry } from '@dw/telemetry';

applyServiceV8Flags();

startTelemetry('ui');
