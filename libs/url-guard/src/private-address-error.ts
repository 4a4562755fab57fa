/**
 * Thrown (or passed to a lookup callback) when a connection would reach a non-public address.
 * A stable `code` lets the callback sender record the attempt's error without matching messages.
 * The message names the host only, never the address it resolved to: it is recorded on the attempt,
 * which the merchant reads, and an address would let a merchant map the internal DNS names
 * (`address` stays on the error for the operator's logs).
 */
export const ERR_PRIVATE_ADDRESS = 'ERR_PRIVATE_ADDRESS';

export class PrivateAddressError extends Error {
  readonly code = ERR_PRIVATE_ADDRESS;

  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(`refusing to connect to ${hostname}: it is not a public address`);
    this.name = 'PrivateAddressError';
  }
}
