import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../config.js';
import { createPrivateFile, narrow, PRIVATE_DIR, PRIVATE_FILE } from './private-files.js';

export type Db = Database.Database;

/** A response row's stored bytes (`row` is the table, NEW or OLD): what the quota counts. */
const RESPONSE_BYTES = (row: string) =>
  `(octet_length(${row}.body) + octet_length(${row}.input) + ifnull(octet_length(${row}.state), 0)
    + octet_length(${row}.open_calls))`;

/** Schema steps in order; user_version counts how many ran. Never edit one that shipped. */
const MIGRATIONS = [
  `CREATE TABLE responses (
     id TEXT PRIMARY KEY,
     org TEXT NOT NULL,
     created_at TEXT NOT NULL,
     status TEXT NOT NULL,
     previous_id TEXT,
     conversation_id TEXT NOT NULL,
     turn INTEGER NOT NULL,
     model TEXT NOT NULL,
     body TEXT NOT NULL,
     input TEXT NOT NULL,
     state TEXT,
     open_calls TEXT NOT NULL
   );
   CREATE INDEX responses_org ON responses (org, created_at);`,
  `CREATE TABLE tasks (
     id TEXT PRIMARY KEY,
     org TEXT NOT NULL,
     created_at TEXT NOT NULL,
     status TEXT NOT NULL,
     body TEXT NOT NULL
   );
   CREATE INDEX tasks_org ON tasks (org, created_at);
   CREATE TABLE task_events (
     task_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     body TEXT NOT NULL,
     PRIMARY KEY (task_id, seq)
   );`,
  // What each organization stores, kept as a running total by triggers, so a quota check is one
  // row read however many responses an organization has. Sizes are UTF-8 bytes of the stored
  // text; an event counts for its task's organization.
  `CREATE TABLE org_usage (org TEXT PRIMARY KEY, bytes INTEGER NOT NULL);
   INSERT INTO org_usage (org, bytes)
     SELECT org, SUM(bytes) FROM (
       SELECT org, ${RESPONSE_BYTES('responses')} AS bytes FROM responses
       UNION ALL SELECT org, octet_length(body) FROM tasks
       UNION ALL SELECT t.org, octet_length(e.body) FROM task_events e JOIN tasks t ON t.id = e.task_id
     ) GROUP BY org;
   CREATE TRIGGER responses_usage_insert AFTER INSERT ON responses BEGIN
     INSERT OR IGNORE INTO org_usage (org, bytes) VALUES (NEW.org, 0);
     UPDATE org_usage SET bytes = bytes + ${RESPONSE_BYTES('NEW')} WHERE org = NEW.org;
   END;
   CREATE TRIGGER responses_usage_update AFTER UPDATE ON responses BEGIN
     UPDATE org_usage SET bytes = bytes - ${RESPONSE_BYTES('OLD')} WHERE org = OLD.org;
     INSERT OR IGNORE INTO org_usage (org, bytes) VALUES (NEW.org, 0);
     UPDATE org_usage SET bytes = bytes + ${RESPONSE_BYTES('NEW')} WHERE org = NEW.org;
   END;
   CREATE TRIGGER responses_usage_delete AFTER DELETE ON responses BEGIN
     UPDATE org_usage SET bytes = bytes - ${RESPONSE_BYTES('OLD')} WHERE org = OLD.org;
   END;
   CREATE TRIGGER tasks_usage_insert AFTER INSERT ON tasks BEGIN
     INSERT OR IGNORE INTO org_usage (org, bytes) VALUES (NEW.org, 0);
     UPDATE org_usage SET bytes = bytes + octet_length(NEW.body) WHERE org = NEW.org;
   END;
   CREATE TRIGGER tasks_usage_update AFTER UPDATE ON tasks BEGIN
     UPDATE org_usage SET bytes = bytes - octet_length(OLD.body) WHERE org = OLD.org;
     INSERT OR IGNORE INTO org_usage (org, bytes) VALUES (NEW.org, 0);
     UPDATE org_usage SET bytes = bytes + octet_length(NEW.body) WHERE org = NEW.org;
   END;
   CREATE TRIGGER tasks_usage_delete AFTER DELETE ON tasks BEGIN
     UPDATE org_usage SET bytes = bytes - octet_length(OLD.body) WHERE org = OLD.org;
   END;
   CREATE TRIGGER task_events_usage_insert AFTER INSERT ON task_events BEGIN
     UPDATE org_usage SET bytes = bytes + octet_length(NEW.body)
       WHERE org = (SELECT org FROM tasks WHERE id = NEW.task_id);
   END;
   CREATE TRIGGER task_events_usage_delete AFTER DELETE ON task_events BEGIN
     UPDATE org_usage SET bytes = bytes - octet_length(OLD.body)
       WHERE org = (SELECT org FROM tasks WHERE id = OLD.task_id);
   END;
   CREATE INDEX responses_created ON responses (created_at);
   CREATE INDEX tasks_created ON tasks (created_at);`,
  // The flight recorder's index: one row per computer (its files are under recordings/<id>/).
  // Times are epoch milliseconds; status is recording, complete, none or dropped.
  `CREATE TABLE recordings (
     computer_id TEXT PRIMARY KEY,
     org TEXT NOT NULL,
     kind TEXT NOT NULL,
     status TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     ended_at INTEGER,
     end_reason TEXT,
     size_bytes INTEGER NOT NULL DEFAULT 0,
     dropped_reason TEXT
   );
   CREATE INDEX recordings_org ON recordings (org, started_at);
   CREATE INDEX recordings_ended ON recordings (status, ended_at);
   CREATE TABLE recording_tasks (
     computer_id TEXT NOT NULL,
     task_id TEXT NOT NULL,
     PRIMARY KEY (computer_id, task_id)
   );
   CREATE INDEX recording_tasks_task ON recording_tasks (task_id);`,
  `CREATE TABLE approvals (
     id TEXT PRIMARY KEY,
     org TEXT NOT NULL,
     computer_id TEXT NOT NULL,
     task_id TEXT,
     status TEXT NOT NULL,
     created_at TEXT NOT NULL,
     body TEXT NOT NULL
   );
   CREATE INDEX approvals_org ON approvals (org, created_at);
   CREATE INDEX approvals_pending ON approvals (status) WHERE status = 'pending';`,
  // The vault: values sealed by the cipher named in sealed_by (keychain or key-file).
  `CREATE TABLE secrets (
     org TEXT NOT NULL,
     name TEXT NOT NULL,
     created_at TEXT NOT NULL,
     sealed BLOB NOT NULL,
     sealed_by TEXT NOT NULL,
     PRIMARY KEY (org, name)
   );`,
  // The usage ledger: one row per model call. seq orders the rows and is the pages' cursor; rows
  // outlive the responses and tasks they belong to (what was spent stays spent).
  `CREATE TABLE model_calls (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     org TEXT NOT NULL,
     response_id TEXT NOT NULL,
     task_id TEXT,
     provider TEXT NOT NULL,
     model TEXT NOT NULL,
     input_tokens INTEGER NOT NULL,
     output_tokens INTEGER NOT NULL,
     cached_tokens INTEGER NOT NULL,
     cost_usd REAL,
     latency_ms INTEGER NOT NULL,
     images INTEGER NOT NULL,
     error TEXT,
     at TEXT NOT NULL
   );
   CREATE INDEX model_calls_org ON model_calls (org, seq);
   CREATE INDEX model_calls_task ON model_calls (org, task_id) WHERE task_id IS NOT NULL;
   CREATE INDEX model_calls_response ON model_calls (org, response_id);
   CREATE INDEX model_calls_at ON model_calls (org, at);`,
  // Failed tasks a person dismissed from what waits for them.
  `CREATE TABLE attention_dismissed (
     org TEXT NOT NULL,
     task_id TEXT NOT NULL,
     at TEXT NOT NULL,
     PRIMARY KEY (org, task_id)
   );
   CREATE INDEX attention_dismissed_at ON attention_dismissed (at);`,
];

/** SQLite's codes for a file that is not a database, or one whose pages are damaged. */
const NOT_A_DATABASE = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT']);

/**
 * The embedded database for responses and tasks: one file in the data dir, WAL journal, foreign
 * writers refused by SQLite's own locking. synchronous=NORMAL: a commit survives the process
 * being killed (SIGKILL included) and the file is never corrupted, but an OS crash, a power cut
 * or a disk remounted read-only can lose the commits since the last checkpoint. FULL would fsync
 * every commit: measured here 3.4 ms p50 and 30 ms p90 per commit against 0.014 ms, which would
 * make an agent step (six commits) cost more than the screenshot and click it wraps (the speed
 * targets of the Responses API and agent tasks). docs/ROBUSTNESS.md states this guarantee.
 */
export function openDatabase(file: string): Db {
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR });
  // Readable by this user only (what organizations asked their models is in it). SQLite gives
  // the -wal and -shm it creates the database file's mode; ones left by an earlier run are
  // narrowed here too.
  createPrivateFile(file);
  narrow(`${file}-wal`, PRIVATE_FILE);
  narrow(`${file}-shm`, PRIVATE_FILE);
  const db = new Database(file);
  let version: number;
  try {
    // The first read of the file: one that is not SQLite fails here.
    version = db.pragma('user_version', { simple: true }) as number;
  } catch (error) {
    db.close();
    if (!NOT_A_DATABASE.has((error as { code?: string }).code ?? '')) throw error;
    throw new ConfigError(
      `${file} is not a Benchtop database (${(error as Error).message}): restore it from a backup, or move it away to start with an empty one (what it held stays in the moved file)`,
      { cause: error },
    );
  }
  if (version > MIGRATIONS.length) {
    db.close();
    // Its tables may hold what this version does not know how to keep: nothing is written.
    throw new ConfigError(
      `${file} was written by a newer Benchtop (schema ${version}; this one knows up to ${MIGRATIONS.length}): run that version, or this one on another data dir (BENCHTOP_DATA_DIR)`,
    );
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  for (let step = version; step < MIGRATIONS.length; step++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[step]!);
      db.pragma(`user_version = ${step + 1}`);
    })();
  }
  return db;
}
