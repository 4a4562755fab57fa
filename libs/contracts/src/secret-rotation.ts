/**
 * POST /api/rotateCallbackSecret (docs/api.md#signing-secret): a new callback signing secret; the old one keeps
 * signing beside it for `overlapSeconds` (default 24 h, 0 revokes it at once).
 */
import { Type, type Static } from '@sinclair/typebox';

export const SECRET_OVERLAP_DEFAULT_SECONDS = 86_400;
export const SECRET_OVERLAP_MAX_SECONDS = 604_800;

export const RotateCallbackSecretBody = Type.Object(
  {
    overlapSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: SECRET_OVERLAP_MAX_SECONDS,
        description: 'how long the old secret keeps signing beside the new one; 0 revokes it at once',
      }),
    ),
  },
  { additionalProperties: false, $id: 'RotateCallbackSecretBody' },
);
export type RotateCallbackSecretBody = Static<typeof RotateCallbackSecretBody>;

export const RotatedCallbackSecret = Type.Object(
  { callbackSigningSecret: Type.String({ pattern: '^whsec_', description: 'shown once: store it now' }) },
  { additionalProperties: false, $id: 'RotatedCallbackSecret' },
);
export type RotatedCallbackSecret = Static<typeof RotatedCallbackSecret>;
