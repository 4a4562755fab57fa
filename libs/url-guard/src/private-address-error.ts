/**
 * Thrown (or passed to a lookup callback) when a connection would reach a non-public address.
 * A stable `code` lets the callback sender record the attempt's error without matching messages.
 */
export const ERR_PRIVATE_ADDRESS = 'ERR_PRIVATE_ADDRESS';

export class PrivateAddressError extends Error {
  readonly code = ERR_PRIVATE_ADDRESS;

  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(
      hostname === address
        ? `refusing to connect to ${address}: it is not a public address`
        : `refusing to connect to ${hostname}: it resolves to ${address}, which is not a public address`,
    );
    this.name = 'PrivateAddressError';
  }
}
