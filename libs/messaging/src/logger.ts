/** The part of a pino (or Fastify) logger this library writes to; it takes no logging dependency. */
export interface MessagingLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

/** Hides the password of an AMQP URL before it is logged. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable AMQP URL)';
  }
}
