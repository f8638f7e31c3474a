/**
 * Read/Edit path rules re-checked by the tools themselves, on the real path of everything they
 * touch, at the moment they touch it (docs/ARCHITECTURE.md#path-rules-on-real-paths). The
 * workflow's decision saw the path as given; a symlink (or one swapped in after the decision)
 * must not carry a Read into `./secrets/**` or a Write into `./protected/**`.
 *
 * Every check here fails closed: a pattern that cannot be resolved counts as matching.
 */
import os from 'node:os';
import * as path from 'node:path';
import { matchPathPattern, resolvePathPattern, type PathBases } from '../../shared/permissions/paths';
import type { PathGuard } from '../../shared/tools';
import { hasGlobMeta } from './glob-match';

export type GuardAction = 'read' | 'write';

/** A path a rule forbids: which rule, on which path. Thrown by `verify` callbacks (see ops.ts `OpenCheck`). */
export class PathGuardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathGuardError';
  }
}

function guardBases(guard: PathGuard): PathBases {
  return {
    cwd: guard.bases.cwd,
    ...(guard.bases.projectRoot ? { projectRoot: guard.bases.projectRoot } : {}),
    // The rules' `~/x` means the home of whoever runs the tools: the worker's.
    homeDir: guard.bases.homeDir ?? os.homedir(),
  };
}

interface Hit {
  /** Why, completing "X …" / "X resolves to Y, which …": "matches the Read rule pattern ./secrets/**". */
  why: string;
}

function firstHit(guard: PathGuard, action: GuardAction, p: string): Hit | undefined {
  const bases = guardBases(guard);
  const patterns: [string, string[]][] = action === 'read' ? [['Read', guard.noRead]] : [['Edit', guard.noEdit]];
  for (const [kind, list] of patterns) {
    for (const pattern of list) {
      // 'unknown' (a base is missing) counts as a match: a rule that cannot be checked holds.
      if (matchPathPattern(pattern, p, bases) !== 'no') return { why: `matches the ${kind} rule pattern ${pattern}` };
    }
  }
  if (action === 'write') {
    const norm = path.resolve(p);
    if (guard.protectedFiles.some((f) => path.resolve(f) === norm)) {
      return { why: "is a file this session's settings or hooks depend on; writing it needs approval" };
    }
  }
  return undefined;
}

/**
 * The denial message for a tool about to touch `requested` (the path as given, absolute and
 * normalised) whose real path is `real`, or undefined when no rule forbids either.
 */
export function guardViolation(
  guard: PathGuard | undefined,
  action: GuardAction,
  tool: string,
  p: { requested: string; real: string },
): string | undefined {
  if (!guard) return undefined;
  const given = firstHit(guard, action, p.requested);
  if (given) return `${tool} denied: ${p.requested} ${given.why}`;
  const real = p.real === p.requested ? undefined : firstHit(guard, action, p.real);
  if (real) return `${tool} denied: ${p.requested} resolves to ${p.real}, which ${real.why}`;
  return undefined;
}

/**
 * The check a file operation runs on the path the kernel says it opened (ops.ts `OpenCheck`):
 * the gap between resolving a path and opening it is where a swapped symlink would slip in.
 */
export function openCheck(guard: PathGuard | undefined, action: GuardAction, tool: string, requested: string) {
  if (!guard) return undefined;
  return {
    verify(opened: string): void {
      const hit = firstHit(guard, action, opened);
      if (hit) throw new PathGuardError(`${tool} denied: ${requested} resolves to ${opened}, which ${hit.why}`);
    },
  };
}

/** Does a Read rule forbid this path (as found by a search: it is checked as given and as resolved by the caller)? */
export function readDenied(guard: PathGuard | undefined, p: string): boolean {
  return guard !== undefined && firstHit(guard, 'read', p) !== undefined;
}

/**
 * ripgrep `--glob`s that keep the search out of what Read rules forbid, relative to the search
 * root (rg runs there). Only what can be translated exactly: a floating pattern (`*.env`, `.env`)
 * as a name at any depth, an anchored one under the root as a path. Everything else — and every
 * result in any case — is left to the check of each result's real path.
 */
export function searchExclusions(guard: PathGuard | undefined, root: string): string[] {
  if (!guard) return [];
  const bases = guardBases(guard);
  const out: string[] = [];
  for (const pattern of guard.noRead) {
    const r = resolvePathPattern(pattern, bases);
    if ('floating' in r) {
      // Relative to cwd: a name anywhere below it. Below another root, excluding more than the rule
      // asks is the safe side; the results' check decides the rest.
      out.push(`!${rgEscape(r.floating)}`);
    } else if ('anchored' in r) {
      const anchored = r.anchored.replace(/\/\*\*$/, '');
      const rel = anchored === root ? '' : anchored.startsWith(`${root}/`) ? anchored.slice(root.length + 1) : undefined;
      if (rel === undefined || rel === '') continue; // elsewhere, or the root itself (refused before searching)
      out.push(`!/${rgEscape(rel)}`);
      if (!hasGlobMeta(rel)) out.push(`!/${rgEscape(rel)}/**`);
    }
  }
  return out;
}

/** Path-rule globs know `*`, `**`, `?`, `[…]`; in rg's, braces alternate: make them literal. */
function rgEscape(glob: string): string {
  return glob.replace(/[{},]/g, '\\$&');
}

/** "(2 results were left out: …)" — said whenever the results' check removed any. */
export function leftOutNote(n: number): string {
  return n === 1
    ? '(1 result was left out because its real path matches a Read rule.)'
    : `(${n} results were left out because their real paths match Read rules.)`;
}
