/** A comma-separated OTEL_* variable as its names: trimmed, empty ones dropped (unset → []). */
export function envList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((name) => name.trim()).filter(Boolean);
}
