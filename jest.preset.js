// Shared Jest setup: SWC transforms TypeScript (about twice as fast as ts-jest); typechecking is the
// separate `typecheck` target. Tests talk to the real PostgreSQL and RabbitMQ, so they run serially
// within a project and with generous timeouts.
const path = require('node:path');

module.exports = (projectDir) => ({
  rootDir: projectDir,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/src/**/*.test.ts'],
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
    ],
  },
  // ESM-only packages, transformed like our own code: Fastify 5's `cookie` 2, and
  // `content-disposition` 3 (under @fastify/swagger-ui's @fastify/static).
  transformIgnorePatterns: ['/node_modules/(?!(cookie|content-disposition)/)'],
  // Prisma's generated client imports `./x.js`.
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // A library's second entry (`@dw/db/testing`) is src/<entry>.ts; its main entry src/index.ts.
    '^@dw/([^/]+)/([^/]+)$': path.join(__dirname, 'libs/$1/src/$2.ts'),
    '^@dw/([^/]+)$': path.join(__dirname, 'libs/$1/src/index.ts'),
  },
  maxWorkers: 1,
  reporters: ['default', path.join(__dirname, 'jest-failures-reporter.js')],
  testTimeout: 30000,
});
