/**
 * What a Grep search asks and finds, shared by the ripgrep runner and the JS fallback so both
 * feed one formatter and the model sees the same text either way.
 */

type GrepMode = 'content' | 'files_with_matches' | 'count';

export interface GrepQuery {
  pattern: string;
  /** Real absolute path searched (a directory, or one file). */
  root: string;
  rootIsDir: boolean;
  /** ripgrep-style `--glob`s, already split; the VCS exclusions come last so they win. */
  globs: string[];
  type?: string;
  ignoreCase: boolean;
  multiline: boolean;
  mode: GrepMode;
  before: number;
  after: number;
  /** Read rules: a folder (absolute path) the JS search must not enter; rg gets `globs` for the same. */
  excluded?(abs: string): boolean;
  /** Content mode: stop after this many printed lines (matches + context). */
  maxEntries: number;
  signal: AbortSignal;
  onProgress?(visited: number): void;
}

export interface GrepLine {
  n: number;
  text: string;
  match: boolean;
}

export type GrepHits =
  | { mode: 'files_with_matches'; files: string[] }
  | { mode: 'count'; counts: { file: string; count: number }[] }
  | { mode: 'content'; files: { file: string; lines: GrepLine[] }[]; more: boolean };

export type GrepRun = { ok: true; hits: GrepHits } | { ok: false; error: string };

/** Directories of version-control systems, never searched. */
export const VCS_DIRS = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl'];

/**
 * ripgrep's `--type` definitions for the common types (ripgrep 14). Types match base names.
 * With ripgrep installed, rg's own (version-dependent) table is used instead.
 */
export const RG_TYPES: Record<string, string[]> = {
  c: ['*.[chH]', '*.[chH].in', '*.cats'],
  cpp: ['*.[ChH]', '*.[ChH].in', '*.[ch]pp', '*.[ch]pp.in', '*.[ch]xx', '*.[ch]xx.in', '*.cc', '*.cc.in', '*.hh', '*.hh.in', '*.inl'],
  go: ['*.go'],
  java: ['*.java', '*.jsp', '*.jspx', '*.properties'],
  js: ['*.cjs', '*.js', '*.jsx', '*.mjs', '*.vue'],
  json: ['*.json', 'composer.lock'],
  markdown: ['*.markdown', '*.md', '*.mdown', '*.mkdn'],
  md: ['*.markdown', '*.md', '*.mdown', '*.mkdn'],
  py: ['*.py', '*.pyi'],
  rust: ['*.rs'],
  sh: [
    '*.bash',
    '*.bashrc',
    '*.csh',
    '*.cshrc',
    '*.ksh',
    '*.kshrc',
    '*.sh',
    '*.tcsh',
    '*.zsh',
    '.bash_login',
    '.bash_logout',
    '.bash_profile',
    '.bashrc',
    '.cshrc',
    '.kshrc',
    '.login',
    '.logout',
    '.profile',
    '.tcshrc',
    '.zlogin',
    '.zlogout',
    '.zprofile',
    '.zshenv',
    '.zshrc',
    'bash_login',
    'bash_logout',
    'bash_profile',
    'bashrc',
    'profile',
    'zlogin',
    'zlogout',
    'zprofile',
    'zshenv',
    'zshrc',
  ],
  ts: ['*.cts', '*.mts', '*.ts', '*.tsx'],
  yaml: ['*.yaml', '*.yml'],
};
