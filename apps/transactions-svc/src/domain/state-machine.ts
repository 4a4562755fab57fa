import type { TransactionStatusName } from '@dw/contracts';

/**
 * pending → processing → completed | failed, and pending → completed | failed directly.
 * completed and failed are final. Enforced in SQL (`UPDATE … WHERE status = ANY(from)`), so two
 * concurrent moves cannot both win.
 */
export const ALLOWED_FROM: Record<Exclude<TransactionStatusName, 'pending'>, TransactionStatusName[]> = {
  processing: ['pending'],
  completed: ['pending', 'processing'],
  failed: ['pending', 'processing'],
};
