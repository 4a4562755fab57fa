import { diag } from '@opentelemetry/api';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  osDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
  type Resource,
  type ResourceDetector,
} from '@opentelemetry/resources';
import { serviceNameFor } from './service-name';
import { envList } from './env-list';

const DETECTORS: Record<string, ResourceDetector> = {
  host: hostDetector,
  os: osDetector,
  serviceinstance: serviceInstanceIdDetector,
  process: processDetector,
  env: envDetector,
};

/**
 * The detectors @opentelemetry/sdk-node ran: env (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME),
 * process and host by default; OTEL_NODE_RESOURCE_DETECTORS chooses among those five (`all`,
 * `none`, or names). The cloud and container detectors of auto-instrumentations-node were never
 * used by the SDK and are not available.
 */
export function resourceDetectorsFromEnv(env: NodeJS.ProcessEnv = process.env): ResourceDetector[] {
  const names = envList(env.OTEL_NODE_RESOURCE_DETECTORS);
  if (names.length === 0) return [envDetector, processDetector, hostDetector];
  if (names.includes('all')) return Object.values(DETECTORS);
  if (names.includes('none')) return [];
  return names.flatMap((name) => {
    const detector = DETECTORS[name];
    if (!detector) diag.warn(`Invalid resource detector "${name}" specified in the environment variable OTEL_NODE_RESOURCE_DETECTORS`);
    return detector ?? [];
  });
}

/**
 * The process's resource, built as NodeSDK built it: the SDK defaults (telemetry.sdk.*), then
 * what the detectors find, then service.name from the app unless the operator set one.
 */
export function serviceResource(appName: string): Resource {
  const detected = defaultResource().merge(detectResources({ detectors: resourceDetectorsFromEnv() }));
  const serviceName = serviceNameFor(appName);
  return serviceName === undefined ? detected : detected.merge(resourceFromAttributes({ 'service.name': serviceName }));
}
