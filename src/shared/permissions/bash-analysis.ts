/**
 * What a Bash command line runs, as the tools worker's parser found it
 * (ARCHITECTURE.md#bash-rules-on-a-real-parse): every simple command the shell would run —
 * inside `-c` scripts, substitutions, `eval` strings, here-strings fed to a shell, past wrappers
 * such as `timeout` or `sudo` — with the strings rules are matched against. Plain JSON: the
 * activity's result is recorded in history and the workflow decides from it (pure, here).
 *
 * Anything that cannot be resolved statically — a command name produced by an expansion, a
 * construct the parser does not know, a parse error — is `unknown`: never allowed by a Bash(…)
 * rule, and matching every deny and ask rule for Bash.
 */
import { matchBashPattern, type BashPattern } from './rules';
import type { Match } from './paths';

export interface BashCommand {
  /** The simple command as written (for messages and suggestions). */
  text: string;
  /** Why it cannot be checked; when set, the fields below are empty. */
  unknown?: string;
  /**
   * Strings allow rules are matched against: the command as written (its words' source text
   * joined by single spaces, redirections left out) and the same past the wrappers Claude Code
   * strips for allow rules (`timeout`, `time`, `nice`, `nohup`, `stdbuf`).
   */
  allowForms: string[];
  /**
   * Strings deny and ask rules are matched against besides `allowForms`: the command past every
   * wrapper, with quotes removed, also with the program's directory left out (`/bin/rm` is `rm`).
   */
  denyForms: string[];
  /**
   * When a word after the program's name is computed at run time: the static words before it
   * (past every wrapper, quotes removed; also with the program's directory left out). A deny or ask rule that such a command could still
   * match is treated as matching.
   */
  computedAfter?: string[];
  /**
   * A command a wrapper runs (`xargs rm`, `find -exec rm {} ;`): matched against deny and ask
   * rules only; allow rules are checked against the wrapper's own command, which includes it.
   */
  inner?: boolean;
  /** `true`, `false`, `:` with nothing else: runs nothing, so it needs no allow rule (deny rules still see it). */
  inert?: boolean;
}

export interface BashAnalysis {
  commands: BashCommand[];
  /** The line as a whole cannot be analysed (a parse error): it is one unknown command. */
  problem?: string;
}

/** How one analysed command meets one Bash pattern of a rule list. */
export function matchBashCommand(pattern: BashPattern, cmd: BashCommand, list: 'allow' | 'deny' | 'ask'): Match {
  if (pattern.type === 'any') return 'yes';
  if (cmd.unknown !== undefined) return list === 'allow' ? 'no' : 'unknown';
  if (list === 'allow') return cmd.allowForms.some((f) => matchBashPattern(pattern, f)) ? 'yes' : 'no';
  if ([...cmd.allowForms, ...cmd.denyForms].some((f) => matchBashPattern(pattern, f))) return 'yes';
  if (cmd.computedAfter?.some((prefix) => couldMatch(pattern, prefix))) return 'unknown';
  return 'no';
}

/**
 * Whether a command whose static words are `prefix` and whose next word is computed could match
 * the pattern once that word is known (conservative: a pattern whose literal start is consistent
 * with the prefix could).
 */
function couldMatch(pattern: BashPattern, prefix: string): boolean {
  const extends_ = (literal: string) => literal === prefix || literal.startsWith(`${prefix} `);
  switch (pattern.type) {
    case 'exact':
      return extends_(pattern.command);
    case 'prefix':
      return extends_(pattern.prefix) || prefix.startsWith(`${pattern.prefix} `);
    case 'wildcard': {
      const literal = literalStart(pattern.pattern);
      return extends_(literal) || prefix.startsWith(literal);
    }
    default:
      return true;
  }
}

function literalStart(wildcard: string): string {
  let out = '';
  for (let i = 0; i < wildcard.length; i++) {
    const c = wildcard[i]!;
    if (c === '\\' && (wildcard[i + 1] === '*' || wildcard[i + 1] === '\\')) out += wildcard[++i];
    else if (c === '*') break;
    else out += c;
  }
  return out;
}
