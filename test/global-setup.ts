import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Set once the run's folder is made: each project of the run calls the setup. Not BENCHTOP_…:
 * those are settings, and Benchtop refuses one it does not know.
 */
const MARK = 'TEST_RUN_TMPDIR';

/**
 * A test run's temporary files in one folder of its own, removed when the run ends: the data
 * dirs, scripts and key files the tests make, the servers and Chromium profiles they start (every
 * process they spawn inherits TMPDIR), including those of a server a test SIGKILLs on purpose.
 */
export default function setup(): () => void {
  if (process.env[MARK]) return () => {};
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-tests-'));
  // As /tmp: tests run programs as another user (nobody), whose files are made in it too.
  chmodSync(dir, 0o1777);
  process.env[MARK] = dir;
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
