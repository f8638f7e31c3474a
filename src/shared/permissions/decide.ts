/**
 * The permission decision for one tool call: a pure function of the call, the mode and the rules.
 * Order: deny rules → plan mode → ask rules → bypassPermissions → allow rules → read-only →
 * acceptEdits → ask a person (dontAsk: deny). Deny wins in every mode. A rule that cannot be
 * checked against the call (a command we cannot analyse, a path without a base) counts as
 * matching for deny and ask rules and as not matching for allow rules: unknown never runs unasked.
 */
import type { PermissionMode } from '../permission-mode';
import { matchBashCommand, type BashAnalysis } from './bash-analysis';
import { splitBashCommand } from './bash-split';
import { basename, commandStart } from './bash-words';
import { absolutePath, isInside, matchPathPattern, type Match, type PathBases } from './paths';
import { matchBashPattern, ruleCoversTool, type PermissionRule, type PermissionRules, type RuleList } from './rules';
import { askRuleDontAskText, deniedByRuleText, notGrantedText, planModeRefusalText, uncheckedDenyText } from '../model-texts';

export interface Workspace extends PathBases {
  /** Besides cwd, where acceptEdits auto-approves edits. */
  additionalDirectories?: readonly string[];
}

export interface PermissionRequest {
  toolName: string;
  /** The tool's validated input; rules read `command`, `file_path`, `notebook_path`, `path`, `subagent_type`, `url`. */
  input: unknown;
  readOnly: boolean;
  mode: PermissionMode;
  rules: PermissionRules;
  workspace: Workspace;
  /**
   * Absolute paths the call touches, symlinks resolved by the caller (an activity: the path as
   * given and its real path). Without it the input's path is used, normalised but not resolved.
   */
  paths?: readonly string[];
  /**
   * What a Bash command runs, from the tools worker's parser (ARCHITECTURE.md#bash-rules-on-a-real-parse).
   * Absent only when replaying histories recorded before it existed: the old in-workflow splitter decides.
   */
  bash?: BashAnalysis;
  /**
   * The call writes this file, which is a settings file the session reads or a script its hooks
   * run: it asks in every mode but bypassPermissions (ARCHITECTURE.md#settings-the-model-cannot-rewrite).
   */
  protectedTarget?: string;
}

interface RuleMatch {
  rule: string;
  list: RuleList;
  source?: string;
  /** The command part or path the rule was checked against. */
  subject?: string;
  /** Set when the rule could not be checked and was applied as if it matched. */
  unchecked?: string;
}

type DecisionReason = 'rule' | 'mode' | 'readOnly' | 'noRule';

export type PermissionDecision =
  | { behavior: 'allow'; reason: DecisionReason; matched: RuleMatch[] }
  | { behavior: 'deny'; message: string; reason: DecisionReason; matched: RuleMatch[] }
  /** `suggestions`: allow rules that would cover this call (for an "always allow" answer). */
  | { behavior: 'ask'; message: string; reason: DecisionReason; matched: RuleMatch[]; suggestions: string[] };

/** Tools that write a file (what `Edit(…)` rules cover), and those that read files. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);
export const READ_TOOLS: ReadonlySet<string> = new Set(['Read', 'Glob', 'Grep']);

/** What a specifier rule is checked against: command parts, paths, an agent name or a host. */
interface Subject {
  label: string;
  test(rule: PermissionRule, list: RuleList): Match;
  unchecked?: string;
  suggestion?: string;
  /** Checked against deny and ask rules only: a command a wrapper runs, or one that runs nothing (`true`). */
  denyOnly?: boolean;
}

interface Analysed {
  subjects: Subject[];
  /** The call as a whole cannot be checked against specifier rules. */
  problem?: string;
}

export function evaluatePermission(req: PermissionRequest): PermissionDecision {
  const call = analyse(req);
  const tool = req.toolName;
  const deny = firstMatch(req.rules.deny, 'deny', req, call);
  if (deny) return { behavior: 'deny', message: denyMessage(tool, deny), reason: 'rule', matched: [deny] };
  if (req.mode === 'plan' && !req.readOnly) {
    const message = planModeRefusalText(tool);
    return { behavior: 'deny', message, reason: 'mode', matched: [] };
  }
  const ask = firstMatch(req.rules.ask, 'ask', req, call);
  if (ask) {
    const why = `it matches the ask rule ${describe(ask)}`;
    if (req.mode === 'dontAsk')
      return {
        behavior: 'deny',
        message: askRuleDontAskText(tool, why),
        reason: 'rule',
        matched: [ask],
      };
    return { behavior: 'ask', message: `${tool} needs approval: ${why}.`, reason: 'rule', matched: [ask], suggestions: [] };
  }
  if (req.protectedTarget !== undefined && EDIT_TOOLS.has(tool) && req.mode !== 'bypassPermissions') {
    const why = `${req.protectedTarget} is a settings file this session reads or a script its hooks run, and a change to it could widen what the agent may do`;
    if (req.mode === 'dontAsk')
      return { behavior: 'deny', message: `${tool} was not run: ${why}; permissionMode dontAsk never asks.`, reason: 'rule', matched: [] };
    return { behavior: 'ask', message: `${tool} needs approval: ${why}.`, reason: 'rule', matched: [], suggestions: [] };
  }
  if (req.mode === 'bypassPermissions') return { behavior: 'allow', reason: 'mode', matched: [] };
  const allowed = allowMatch(req, call);
  if (allowed.uncovered.length === 0) return { behavior: 'allow', reason: 'rule', matched: allowed.matched };
  if (req.readOnly) return { behavior: 'allow', reason: 'readOnly', matched: [] };
  if (req.mode === 'acceptEdits' && EDIT_TOOLS.has(tool) && !call.problem && insideWorkspace(call, req.workspace)) {
    return { behavior: 'allow', reason: 'mode', matched: [] };
  }
  const message = notGrantedMessage(tool, allowed.uncovered, call);
  if (req.mode === 'dontAsk') return { behavior: 'deny', message, reason: 'noRule', matched: [] };
  return { behavior: 'ask', message, reason: 'noRule', matched: [], suggestions: suggest(tool, allowed.uncovered, call) };
}

function firstMatch(rules: readonly PermissionRule[], list: RuleList, req: PermissionRequest, call: Analysed): RuleMatch | undefined {
  for (const rule of rules) {
    if (!ruleCoversTool(rule, req.toolName)) continue;
    const base = { rule: rule.text, list, source: rule.source };
    if (rule.kind === 'tool' || rule.kind === 'mcpServer') return base;
    if (call.problem) return { ...base, unchecked: call.problem };
    for (const s of call.subjects) {
      const m = s.test(rule, list);
      if (m === 'yes') return { ...base, subject: s.label };
      if (m === 'unknown') return { ...base, subject: s.label, unchecked: s.unchecked ?? 'it cannot be checked' };
    }
  }
  return undefined;
}

/** Allowed when a bare rule covers the tool, or every subject (each command part, each path) is covered by some rule. */
function allowMatch(req: PermissionRequest, call: Analysed): { matched: RuleMatch[]; uncovered: Subject[] } {
  const rules = req.rules.allow.filter((r) => ruleCoversTool(r, req.toolName));
  const bare = rules.find((r) => r.kind === 'tool' || r.kind === 'mcpServer');
  if (bare) return { matched: [{ rule: bare.text, list: 'allow', source: bare.source }], uncovered: [] };
  if (call.problem) return { matched: [], uncovered: [{ label: req.toolName, test: () => 'no' }] };
  const matched: RuleMatch[] = [];
  const uncovered: Subject[] = [];
  for (const s of call.subjects) {
    if (s.denyOnly) continue;
    const rule = rules.find((r) => s.test(r, 'allow') === 'yes');
    if (rule) matched.push({ rule: rule.text, list: 'allow', source: rule.source, subject: s.label });
    else uncovered.push(s);
  }
  if (call.subjects.length === 0) uncovered.push({ label: req.toolName, test: () => 'no' });
  return { matched, uncovered };
}

function field(input: unknown, name: string): string | undefined {
  const v = input && typeof input === 'object' ? (input as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : undefined;
}

function analyse(req: PermissionRequest): Analysed {
  const { toolName: tool, input, workspace } = req;
  if (tool === 'Bash') return req.bash ? fromAnalysis(req.bash) : analyseBash(field(input, 'command'));
  if (EDIT_TOOLS.has(tool) || READ_TOOLS.has(tool)) {
    const given =
      tool === 'NotebookEdit'
        ? field(input, 'notebook_path')
        : READ_TOOLS.has(tool) && tool !== 'Read'
          ? (field(input, 'path') ?? workspace.cwd)
          : field(input, 'file_path');
    const abs = given === undefined ? undefined : absolutePath(given, workspace.cwd);
    const paths = req.paths ?? (abs ? [abs] : []);
    if (paths.length === 0)
      return {
        subjects: [],
        problem: given === undefined ? 'the call names no path' : 'its relative path has no working directory to resolve against',
      };
    return {
      subjects: paths.map((p) => ({
        label: p,
        test: (rule) => (rule.kind === 'path' ? matchPathPattern(rule.pattern, p, workspace) : 'no'),
        unchecked: `the rule's base directory is unknown`,
        suggestion: `${EDIT_TOOLS.has(tool) ? 'Edit' : 'Read'}(/${p})`,
      })),
    };
  }
  if (tool === 'Task' || tool === 'Agent') {
    const agent = field(input, 'subagent_type');
    if (agent === undefined) return { subjects: [], problem: 'the call names no subagent_type' };
    return {
      subjects: [
        { label: agent, test: (rule) => (rule.kind === 'agent' && rule.agent === agent ? 'yes' : 'no'), suggestion: `Task(${agent})` },
      ],
    };
  }
  if (tool === 'WebFetch') {
    const host = hostOf(field(input, 'url'));
    if (host === undefined) return { subjects: [], problem: 'the call has no URL with a host' };
    return {
      subjects: [
        {
          label: host,
          test: (rule) => (rule.kind === 'domain' && domainMatches(rule.domain, host) ? 'yes' : 'no'),
          suggestion: `WebFetch(domain:${host})`,
        },
      ],
    };
  }
  return { subjects: [] };
}

/** Subjects from the tools worker's parse: one per command the line runs. */
function fromAnalysis(analysis: BashAnalysis): Analysed {
  if (analysis.problem) return { subjects: [], problem: `the command cannot be analysed: ${analysis.problem}` };
  if (analysis.commands.length === 0) return { subjects: [], problem: 'the command runs nothing' };
  return {
    subjects: analysis.commands.map((cmd) => ({
      label: cmd.text,
      unchecked: cmd.unknown,
      denyOnly: cmd.inner === true || cmd.inert === true,
      suggestion: cmd.unknown || cmd.inner ? undefined : `Bash(${cmd.allowForms[0]!.replace(/[\\*]/g, '\\$&')})`,
      test: (rule: PermissionRule, list: RuleList): Match => (rule.kind === 'bash' ? matchBashCommand(rule.pattern, cmd, list) : 'no'),
    })),
  };
}

/** The splitter of earlier versions: decides only for histories recorded before the parse (see `bash`). */
function analyseBash(command: string | undefined): Analysed {
  if (command === undefined) return { subjects: [], problem: 'the call has no command' };
  const split = splitBashCommand(command);
  if (split.problem) return { subjects: [], problem: `the command cannot be analysed (${split.problem})` };
  if (split.parts.length === 0) return { subjects: [], problem: 'the command is empty' };
  return {
    subjects: split.parts.map((part) => {
      const forAllow = unique([part.text, part.text.slice(part.words[commandStart(part.words, 'documented')]?.start ?? 0)]);
      const all = commandStart(part.words, 'all');
      const rest = part.words.slice(all);
      const unquoted = rest.map((w) => w.value);
      const forDenyAndAsk = unique([
        ...forAllow,
        part.text.slice(rest[0]?.start ?? 0),
        unquoted.join(' '),
        [basename(unquoted[0] ?? ''), ...unquoted.slice(1)].join(' '),
      ]);
      return {
        label: part.text,
        unchecked: part.opaque,
        suggestion: part.opaque ? undefined : `Bash(${part.text.replace(/[\\*]/g, '\\$&')})`,
        test: (rule: PermissionRule, list: RuleList): Match => {
          if (rule.kind !== 'bash') return 'no';
          if (part.opaque) return rule.pattern.type === 'any' ? 'yes' : 'unknown';
          const candidates = list === 'allow' ? forAllow : forDenyAndAsk;
          return candidates.some((c) => matchBashPattern(rule.pattern, c)) ? 'yes' : 'no';
        },
      };
    }),
  };
}

function unique(xs: string[]): string[] {
  return [...new Set(xs.filter((x) => x.trim() !== ''))];
}

/** Host of an http(s) URL, lower-cased, without port or credentials (no URL global in workflow code). */
function hostOf(url: string | undefined): string | undefined {
  const m = url ? /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]+)/i.exec(url) : null;
  return m ? m[1]!.toLowerCase() : undefined;
}

function domainMatches(domain: string, host: string): boolean {
  return domain.startsWith('*.') ? host.endsWith(domain.slice(1)) : host === domain;
}

function insideWorkspace(call: Analysed, ws: Workspace): boolean {
  const roots = [ws.cwd, ...(ws.additionalDirectories ?? [])].filter((d): d is string => !!d);
  return call.subjects.length > 0 && call.subjects.every((s) => roots.some((r) => isInside(s.label, absolutePath(r, undefined) ?? r)));
}

/** Allow rules that would cover the call; never the bare `Bash` for a command we could not analyse. */
function suggest(tool: string, uncovered: Subject[], call: Analysed): string[] {
  if (!call.problem && uncovered.length > 0 && uncovered.every((s) => s.suggestion))
    return [...new Set(uncovered.map((s) => s.suggestion!))];
  return tool === 'Bash' ? [] : [tool];
}

function describe(m: RuleMatch): string {
  return `${m.rule}${m.source ? ` (${m.source})` : ''}${m.subject ? ` for \`${m.subject}\`` : ''}`;
}

function denyMessage(tool: string, m: RuleMatch): string {
  if (m.unchecked) return uncheckedDenyText(tool, { ...m, unchecked: m.unchecked });
  return deniedByRuleText(tool, describe(m));
}

function notGrantedMessage(tool: string, uncovered: Subject[], call: Analysed): string {
  const what = call.problem ? ` (${call.problem})` : tool === 'Bash' ? ` for ${uncovered.map((s) => `\`${s.label}\``).join(', ')}` : '';
  return notGrantedText(tool, what, suggest(tool, uncovered, call), EDIT_TOOLS.has(tool));
}
