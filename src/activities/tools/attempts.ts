/**
 * The attempt journal (ARCHITECTURE.md#side-effects-reported-as-unknown): a durable note, on the workspace host, that an attempt of a
 * non-idempotent command started. A heartbeat cannot serve: it reaches the server later, so a
 * worker killed right after spawning leaves no trace there and the retry would run the command
 * again. The journal is written and fsynced before the process exists; a retry that finds it
 * reports "effects unknown" instead of running the command twice. Tools run on the workspace
 * host's queue (ARCHITECTURE.md#tools-pinned-to-their-host), so the retry reads the same journal.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import path from 'node:path';

export interface AttemptJournal {
  /** Durably record that the attempt identified by `key` is about to start its side effects. */
  markStarted(key: string): void;
  started(key: string): boolean;
}

/** Entries older than this are removed when a worker starts using the journal. */
const KEEP_MS = 14 * 24 * 3_600_000;

function defaultJournalDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME || path.join(homedir(), '.local', 'state');
  return path.join(state, 'durable-agent', 'attempts');
}

export function createAttemptJournal(dir = defaultJournalDir()): AttemptJournal {
  let ready = false;
  const file = (key: string) => path.join(dir, createHash('sha256').update(key).digest('hex').slice(0, 40));
  const prepare = () => {
    if (ready) return;
    mkdirSync(dir, { recursive: true });
    const cutoff = Date.now() - KEEP_MS;
    for (const name of readdirSync(dir)) {
      try {
        if (statSync(path.join(dir, name)).mtimeMs < cutoff) unlinkSync(path.join(dir, name));
      } catch {
        // another worker removed it first
      }
    }
    ready = true;
  };
  return {
    markStarted(key) {
      prepare();
      const fd = openSync(file(key), 'w');
      try {
        writeSync(fd, `${key}\n${new Date().toISOString()}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
    started(key) {
      return existsSync(file(key));
    },
  };
}
