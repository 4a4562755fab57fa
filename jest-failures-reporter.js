// Names every failed test in the last lines a run prints. CI keeps only the tail of a long,
// interleaved log, and jest's own "Summary of all failing tests" appears only above 20 test files;
// without this a red run said "1 failed" and nothing about which.
const path = require('node:path');

class FailuresReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const lines = [];
    for (const file of results.testResults) {
      const where = path.relative(this.rootDir, file.testFilePath);
      if (file.testExecError) lines.push(`FAILED ${where}: ${gist(file.testExecError.message || file.failureMessage || file.testExecError.stack)}`);
      for (const test of file.testResults) {
        if (test.status === 'failed') lines.push(`FAILED ${where} › ${test.fullName}: ${gist(test.failureMessages[0])}`);
      }
      if (!file.testExecError && file.failureMessage && !file.testResults.some((t) => t.status === 'failed')) {
        lines.push(`FAILED ${where}: ${gist(file.failureMessage)}`);
      }
    }
    if (lines.length > 0) process.stderr.write(`\n${lines.join('\n')}\n`);
  }
}

function gist(text = '') {
  // eslint-disable-next-line no-control-regex
  const plain = text.replace(/\u001b\[[0-9;]*m/g, '');
  const lines = plain.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('●') && !l.startsWith('at '));
  return lines.slice(0, 4).join(' | ').slice(0, 400);
}

module.exports = FailuresReporter;
