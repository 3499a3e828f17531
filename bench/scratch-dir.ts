import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Loaded before the bench (`node --import`, so before any case's module makes its scratch
 * folder): the run's temporary files, and those of every process it starts (TMPDIR is
 * inherited), go into one folder, removed when the bench exits. As the tests' global setup.
 */
const dir = mkdtempSync(join(tmpdir(), 'benchtop-bench-run-'));
chmodSync(dir, 0o1777);
process.env.TMPDIR = dir;
process.on('exit', () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
