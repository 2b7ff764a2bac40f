/**
 * The shape of test/matrix/results.json (written by run-matrix.ts, read by render.ts) and the
 * step from a suite run's top-level tests to a cell's outcome.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/maven-jars.js';
import type { CellPlan, Column } from './features.js';
import type { TopLevelTest } from './tap-results.js';

export type Outcome = 'pass' | 'fail' | 'not-applicable' | 'not-run' | 'unsupported';

export interface RunResult {
  id: string;
  suite: string;
  env: Record<string, string>;
  /** The process's exit code, or the signal that ended it. */
  exit: number | string;
  seconds: number;
  tests: TopLevelTest[];
  fileFailures: string[];
  skipped?: string;
}

export interface CellResult {
  feature: string;
  column: Column;
  outcome: Outcome;
  /** Why a cell is not applicable or not run, or what failed. */
  reason?: string;
  /** Subtests of the proving tests that passed / failed. */
  passed: number;
  failed: number;
  /** The runs (and top-level tests) that prove the cell, as `suite@version[: test names]`. */
  proofs: string[];
}

export interface MatrixResults {
  /** Day of the run (UTC), YYYY-MM-DD. */
  date: string;
  /** The runs' times added up: the wall time of a full run, less the build and the render. */
  wallSeconds: number;
  runs: RunResult[];
  cells: CellResult[];
}

export const RESULTS_PATH = ['test', 'matrix', 'results.json'];

export function resultsFile(): string {
  return join(repoRoot(), ...RESULTS_PATH);
}

export function readResults(file = resultsFile()): MatrixResults {
  return JSON.parse(readFileSync(file, 'utf8')) as MatrixResults;
}

/** A cell's outcome from its plan and the runs. */
export function cellResult(feature: string, column: Column, plan: CellPlan, runs: RunResult[]): CellResult {
  if (plan.kind !== 'run')
    return { feature, column, outcome: plan.kind, reason: plan.reason, passed: 0, failed: 0, proofs: [] };
  let passed = 0;
  let failed = 0;
  const problems: string[] = [];
  const proofs: string[] = [];
  for (const proof of plan.proofs) {
    const run = runs.find((r) => r.id === proof.run);
    if (!run) {
      problems.push(`${proof.run} was not run`);
      continue;
    }
    const only = proof.only ? new RegExp(proof.only) : undefined;
    const except = proof.except ? new RegExp(proof.except) : undefined;
    const tests = run.tests.filter((t) => (!only || only.test(t.name)) && !except?.test(t.name));
    proofs.push(proof.only ? `${run.id}: ${tests.map((t) => t.name).join(', ') || proof.only}` : run.id);
    for (const t of tests) {
      passed += t.passed;
      failed += t.failed;
      if (!t.ok) problems.push(...(t.failures.length > 0 ? t.failures : [`${t.name} failed`]));
    }
    if (run.skipped) problems.push(`${run.id} skipped itself: ${run.skipped}`);
    // a failure outside the tests (the cluster did not start, the process died) fails every cell of the run
    if (run.fileFailures.length > 0) problems.push(...run.fileFailures.map((f) => `${run.id}: ${f}`));
    if (tests.length === 0) problems.push(`${run.id}: no test${proof.only ? ` matching /${proof.only}/` : ''} ran`);
    else if (
      typeof run.exit === 'string' ||
      (run.exit !== 0 && run.fileFailures.length === 0 && tests.every((t) => t.ok) && !only && !except)
    )
      problems.push(`${run.id} ended with ${run.exit}`);
  }
  if (problems.length > 0)
    return { feature, column, outcome: 'fail', reason: problems.join('; '), passed, failed, proofs };
  if (plan.passedMeans === 'unsupported')
    return { feature, column, outcome: 'unsupported', reason: plan.note, passed, failed, proofs };
  return { feature, column, outcome: 'pass', passed, failed, proofs };
}
