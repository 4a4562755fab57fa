export { isPublicAddress } from './is-public-address';
export { checkCallbackUrl, type CallbackUrlCheck, type CheckCallbackUrlOptions } from './check-callback-url';
export { MAX_CALLBACK_URL_LENGTH } from './callback-url-syntax';
export { NOT_PUBLIC_HOST, type HostLookup } from './callback-url-host';
export { guardedLookup, assertPublicHost, type LookupFunction } from './guarded-lookup';
export { PrivateAddressError, ERR_PRIVATE_ADDRESS } from './private-address-error';
export { createHostResolver, defaultHostResolver, type HostResolver, type HostResolverOptions } from './resolve-host';
export { HostsFile } from './hosts-file';
