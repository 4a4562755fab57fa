// What a test run's broker prefix looks like: `test.<label>.<8 hex>.`, as testPrefix() writes it
// (libs/testing/src/test-prefix.ts; libs/testing/test/test-prefix.test.ts checks that the two agree).
// Group 1 is the prefix of a queue or exchange name that has one.
export const TEST_PREFIX = /^(test\.(?:[^.]+\.)*?[0-9a-f]{8}\.)/;
