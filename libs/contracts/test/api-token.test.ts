import { API_TOKEN_PATTERN, apiTokenHash } from '../src/api-token';

describe('apiTokenHash: the digest by which the database and the gateway know a token', () => {
  it('is the lowercase hex SHA-256 of the UTF-8 bytes (FIPS 180-2 vector "abc")', () => {
    expect(apiTokenHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes UTF-8, not UTF-16 or Latin-1: "é" is the two bytes c3 a9 (sha256sum of them)', () => {
    expect(apiTokenHash('é')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
  });

  it('gives a token of the issued shape 64 hex characters', () => {
    const token = `dwk_${'A'.repeat(43)}`;
    expect(token).toMatch(API_TOKEN_PATTERN);
    expect(apiTokenHash(token)).toMatch(/^[0-9a-f]{64}$/);
  });
});
