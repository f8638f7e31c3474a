#!/usr/bin/env node
// Commit subjects are at most 72 characters (the detail goes in the body). Checks the commits not
// yet on the branch's upstream (else on origin/main or main); with no such base, in a shallow clone
// (CI) or when nothing is ahead, the last commit alone. Merge commits are skipped.
//   node scripts/check-commit-subjects.mjs             the commits described above
//   node scripts/check-commit-subjects.mjs A..B        a range of your choosing
//   node scripts/check-commit-subjects.mjs --file F    a message file (.githooks/commit-msg runs this)
// Plain Node with no dependencies. Exits 1 naming each subject that is too long.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const MAX = 72;

const git = (...args) => {
  const r = spawnSync('git', args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
};

/** The subject of a message as written: its first line that is neither blank nor a `#` comment. */
const subjectOf = (message) => message.split('\n').find((line) => line.trim() !== '' && !line.startsWith('#')) ?? '';

/** Subjects git writes or rewrites itself: merges, and autosquash's fixup!/squash!/amend! prefixes. */
const exempt = (subject) => /^(Merge |(fixup|squash|amend)! )/.test(subject);

function commitsToCheck(range) {
  if (range) return { label: range, list: git('log', '--no-merges', '--format=%h %s', range) };
  const head = git('rev-parse', 'HEAD');
  if (!head) return { label: 'nothing (no commits)', list: '' };
  const shallow = git('rev-parse', '--is-shallow-repository') === 'true';
  const base = shallow ? undefined : ['@{upstream}', 'origin/main', 'main'].find((ref) => git('rev-parse', '--verify', '-q', ref));
  const ahead = base && git('rev-parse', base) !== head ? git('log', '--no-merges', '--format=%h %s', `${base}..HEAD`) : '';
  if (base && ahead) return { label: `${base}..HEAD`, list: ahead };
  return { label: 'HEAD', list: git('log', '-1', '--no-merges', '--format=%h %s', 'HEAD', '--not', 'HEAD^@') ?? '' };
}

const fileAt = process.argv.indexOf('--file');
let checked;
if (fileAt !== -1) {
  const file = process.argv[fileAt + 1];
  checked = { label: file, subjects: [{ at: 'this commit', subject: subjectOf(readFileSync(file, 'utf8')) }] };
} else {
  const { label, list } = commitsToCheck(process.argv[2]);
  if (list === undefined) {
    console.error(`check-commit-subjects: git log ${label} failed`);
    process.exit(2);
  }
  const subjects = list
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ at: line.slice(0, line.indexOf(' ')), subject: line.slice(line.indexOf(' ') + 1) }));
  checked = { label, subjects };
}

const long = checked.subjects.filter(({ subject }) => !exempt(subject) && [...subject].length > MAX);
for (const { at, subject } of long) {
  console.error(`${at}: the subject is ${[...subject].length} characters (at most ${MAX}; put the detail in the body):\n  ${subject}`);
}
if (long.length > 0) process.exit(1);
console.log(`commit subjects ≤ ${MAX} characters: ${checked.subjects.length} checked (${checked.label})`);
