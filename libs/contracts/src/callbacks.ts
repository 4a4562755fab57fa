import { Type, type Static } from '@sinclair/typebox';
import { PRINTABLE_PATTERN } from './text-rules';

export const CallbackUrls = Type.Object(
  {
    depositCallbackUrl: Type.Union([Type.String(), Type.Null()]),
    withdrawCallbackUrl: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, $id: 'CallbackUrls' },
);
export type CallbackUrls = Static<typeof CallbackUrls>;

export const UpdateCallbackUrlBody = Type.Object(
  {
    url: Type.Union(
      [
        Type.String({
          minLength: 1,
          maxLength: 2048,
          pattern: PRINTABLE_PATTERN,
          description: 'An absolute http/https URL of printable characters',
        }),
        Type.Null(),
      ],
      {
        description:
          'Absolute http/https URL without user:password, at most 2048 characters, whose host is public (unless the ' +
          'deployment allows private hosts); null removes it',
      },
    ),
  },
  { additionalProperties: false, $id: 'UpdateCallbackUrlBody' },
);
export type UpdateCallbackUrlBody = Static<typeof UpdateCallbackUrlBody>;
