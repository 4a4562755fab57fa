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
  // With one worker the tests run in Jest's own process, so a client a failed setup never closed (a
  // broker connection that keeps reconnecting while RabbitMQ refuses the topology) holds the run
  // open after its last test: callback-svc's tests did so for over an hour in a CI run that timed
  // out. In CI the run ends after its last test whatever is left open; elsewhere Jest waits, so a
  // leaked handle shows as a run that does not end.
  forceExit: process.env.CI === 'true',
  reporters: ['default', path.join(__dirname, 'jest-failures-reporter.js')],
  testTimeout: 30000,
});
