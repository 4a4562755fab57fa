/** Whether a received callback's Standard Webhooks signature verifies with `secret` (as a merchant's verifier would). */
import type { ReceivedCallback } from '@dw/testing';
import { Webhook } from 'standardwebhooks';

export function verifies(secret: string, r: ReceivedCallback): boolean {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
