/**
 * The service.name to give the SDK: the app's own name unless the operator named the service
 * with the standard variables (OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES),
 * in which case undefined lets the env resource detector apply theirs.
 */
export function serviceNameFor(defaultName: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env.OTEL_SERVICE_NAME?.trim();
  if (fromEnv) return fromEnv;
  if (/(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')) return undefined;
  return defaultName;
}
