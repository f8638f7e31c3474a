/**
 * Programs that run another command, and how each passes it on
 * (ARCHITECTURE.md#bash-rules-on-a-real-parse): its options (which take a value, which do not —
 * any other option makes the command unreadable rather than guessed at: a wrong guess puts the
 * real command where no rule looks), the words before the command, and the options whose value
 * is a shell script. Shells, `env`, `xargs`, `find`, `parallel`, `watch`, `ssh` and the builtins
 * that run strings are handled in bash-analyse.ts.
 */

export interface WrapperSpec {
  /** Short options that take a value (the next word, or the rest of the cluster). */
  valueShort: string;
  /** Short options without a value. */
  flagShort: string;
  longValue?: readonly string[];
  longFlags?: readonly string[];
  /** Words between the options and the command (timeout's duration, chroot's directory). */
  positional?: number;
  /** Claude Code strips it before matching allow rules (`timeout`, `time`, `nice`, `nohup`, `stdbuf`). */
  documented?: boolean;
  /** Options whose value is a shell script it runs (`su -c`, `flock -c`, `script -c`). */
  scriptOptions?: readonly string[];
  /** A short option followed by digits alone is a value (`nice -10`). */
  numericShort?: boolean;
}

const HELP = ['help', 'version'];

export const WRAPPERS: ReadonlyMap<string, WrapperSpec> = new Map<string, WrapperSpec>([
  [
    'timeout',
    {
      valueShort: 'sk',
      flagShort: 'v',
      longValue: ['signal', 'kill-after'],
      longFlags: ['foreground', 'preserve-status', 'verbose', ...HELP],
      positional: 1,
      documented: true,
    },
  ],
  [
    'time',
    {
      valueShort: 'fo',
      flagShort: 'apqv',
      longValue: ['format', 'output'],
      longFlags: ['append', 'verbose', 'portability', 'quiet', ...HELP],
      documented: true,
    },
  ],
  ['nice', { valueShort: 'n', flagShort: '', longValue: ['adjustment'], longFlags: HELP, documented: true, numericShort: true }],
  ['nohup', { valueShort: '', flagShort: '', longFlags: HELP, documented: true }],
  ['stdbuf', { valueShort: 'ioe', flagShort: '', longValue: ['input', 'output', 'error'], longFlags: HELP, documented: true }],
  [
    'sudo',
    {
      valueShort: 'ugCDhprtUTRac',
      flagShort: 'AbEeHiKklnPSsVv',
      longValue: [
        'user',
        'group',
        'close-from',
        'chdir',
        'host',
        'prompt',
        'role',
        'type',
        'other-user',
        'command-timeout',
        'chroot',
        'auth-type',
        'login-class',
      ],
      longFlags: [
        'askpass',
        'background',
        'bell',
        'edit',
        'login',
        'list',
        'non-interactive',
        'preserve-groups',
        'preserve-env',
        'remove-timestamp',
        'reset-timestamp',
        'shell',
        'stdin',
        'validate',
        'set-home',
        ...HELP,
      ],
    },
  ],
  ['doas', { valueShort: 'uC', flagShort: 'nSs' }],
  ['pkexec', { valueShort: '', flagShort: '', longValue: ['user'], longFlags: ['disable-internal-agent', 'keep-cwd', ...HELP] }],
  ['command', { valueShort: '', flagShort: 'pvV' }],
  ['builtin', { valueShort: '', flagShort: '' }],
  ['exec', { valueShort: 'a', flagShort: 'cl' }],
  ['coproc', { valueShort: '', flagShort: '' }],
  ['setsid', { valueShort: '', flagShort: 'cfw', longFlags: ['ctty', 'fork', 'wait', ...HELP] }],
  [
    'ionice',
    { valueShort: 'cnp', flagShort: 'tuPh', longValue: ['class', 'classdata', 'pid', 'pgid', 'uid'], longFlags: ['ignore', ...HELP] },
  ],
  [
    'chrt',
    {
      valueShort: 'TPD',
      flagShort: 'abdfiomrRv',
      longValue: ['sched-runtime', 'sched-period', 'sched-deadline'],
      longFlags: ['all-tasks', 'batch', 'deadline', 'fifo', 'idle', 'other', 'rr', 'reset-on-fork', 'verbose', ...HELP],
      positional: 1,
    },
  ],
  ['taskset', { valueShort: '', flagShort: 'ac', longFlags: ['all-tasks', 'cpu-list', ...HELP], positional: 1 }],
  [
    'numactl',
    {
      valueShort: 'CiNmpP',
      flagShort: 'alsH',
      longValue: ['cpunodebind', 'interleave', 'membind', 'physcpubind', 'preferred', 'localalloc'],
    },
  ],
  [
    'flock',
    {
      valueShort: 'wEc',
      flagShort: 'sxunoFv',
      longValue: ['timeout', 'wait', 'conflict-exit-code', 'command'],
      longFlags: ['shared', 'exclusive', 'unlock', 'nonblock', 'nb', 'close', 'no-fork', 'verbose', ...HELP],
      positional: 1,
      scriptOptions: ['c', 'command'],
    },
  ],
  [
    'su',
    {
      valueShort: 'cgGsw',
      flagShort: 'flmpP',
      longValue: ['command', 'session-command', 'group', 'supp-group', 'shell', 'whitelist-environment'],
      longFlags: ['fast', 'login', 'preserve-environment', 'pty', ...HELP],
      scriptOptions: ['c', 'command', 'session-command'],
    },
  ],
  [
    'runuser',
    {
      valueShort: 'cgGsuw',
      flagShort: 'flmpP',
      longValue: ['command', 'session-command', 'group', 'supp-group', 'shell', 'user', 'whitelist-environment'],
      longFlags: ['fast', 'login', 'preserve-environment', 'pty', ...HELP],
      scriptOptions: ['c', 'command', 'session-command'],
    },
  ],
  ['sg', { valueShort: 'c', flagShort: '', scriptOptions: ['c'], positional: 1 }],
  [
    'script',
    {
      valueShort: 'cEIOBTm',
      flagShort: 'aefqw',
      longValue: ['command', 'echo', 'log-in', 'log-out', 'log-io', 'log-timing', 'logging-format', 'output-limit'],
      longFlags: ['append', 'return', 'flush', 'force', 'quiet', ...HELP],
      scriptOptions: ['c', 'command'],
    },
  ],
  ['chroot', { valueShort: '', flagShort: '', longValue: ['userspec', 'groups'], longFlags: ['skip-chdir', ...HELP], positional: 1 }],
  [
    'unshare',
    {
      valueShort: 'S',
      flagShort: 'muinpUCTfr',
      longValue: ['setuid', 'setgid', 'propagation', 'root', 'wd', 'kill-child', 'map-user', 'map-group', 'map-users', 'map-groups'],
      longFlags: [
        'mount',
        'uts',
        'ipc',
        'net',
        'pid',
        'user',
        'cgroup',
        'time',
        'fork',
        'map-root-user',
        'map-current-user',
        'mount-proc',
        'keep-caps',
        ...HELP,
      ],
    },
  ],
  [
    'nsenter',
    {
      valueShort: 'tSGwr',
      flagShort: 'muinpUCTFaZ',
      longValue: ['target', 'setuid', 'setgid', 'wd', 'root'],
      longFlags: ['mount', 'uts', 'ipc', 'net', 'pid', 'user', 'cgroup', 'time', 'all', 'no-fork', 'preserve-credentials', ...HELP],
    },
  ],
  [
    'setpriv',
    {
      valueShort: '',
      flagShort: 'd',
      longValue: [
        'ruid',
        'euid',
        'rgid',
        'egid',
        'reuid',
        'regid',
        'groups',
        'inh-caps',
        'ambient-caps',
        'bounding-set',
        'securebits',
        'pdeathsig',
        'selinux-label',
        'apparmor-profile',
        'landlock-access',
        'landlock-rule',
      ],
      longFlags: ['dump', 'nnp', 'no-new-privs', 'clear-groups', 'keep-groups', 'init-groups', 'reset-env', ...HELP],
    },
  ],
  ['prlimit', { valueShort: 'p', flagShort: '', longValue: ['pid', 'output'], longFlags: ['noheadings', 'raw', 'verbose', ...HELP] }],
  [
    'setarch',
    {
      valueShort: '',
      flagShort: 'vRFZLXBIST3',
      longFlags: [
        'verbose',
        'addr-no-randomize',
        'fdpic-funcptrs',
        'mmap-page-zero',
        'addr-compat-layout',
        'read-implies-exec',
        '32bit',
        'short-inode',
        'whole-seconds',
        'sticky-timeouts',
        '3gb',
        'uname-2.6',
        ...HELP,
      ],
      positional: 1,
    },
  ],
  ['linux32', { valueShort: '', flagShort: 'vRFZLXBIST3' }],
  ['linux64', { valueShort: '', flagShort: 'vRFZLXBIST3' }],
  [
    'strace',
    {
      valueShort: 'abeEIoOpPsSuUX',
      flagShort: 'cCdDfFhiknqrtTvVwxyYzZ',
      longValue: ['output', 'signal', 'trace', 'env', 'user', 'status', 'string-limit'],
      longFlags: ['follow-forks', 'summary-only', ...HELP],
    },
  ],
  ['ltrace', { valueShort: 'aAeEFlnopsuwX', flagShort: 'bcCDfhiLrStTV', longFlags: ['demangle', ...HELP] }],
  ['eatmydata', { valueShort: '', flagShort: '' }],
  ['fakeroot', { valueShort: 'ilsb', flagShort: 'uh', longValue: ['lib', 'faked'], longFlags: ['unknown-is-real', ...HELP] }],
  ['unbuffer', { valueShort: '', flagShort: 'p' }],
  ['rlwrap', { valueShort: 'aAbCDeEfFgHilmMoOpPqRsStTwz', flagShort: 'cchnrRv' }],
  ['catchsegv', { valueShort: '', flagShort: '' }],
  ['dbus-run-session', { valueShort: '', flagShort: '', longValue: ['config-file', 'dbus-daemon'], longFlags: HELP }],
  [
    'xvfb-run',
    {
      valueShort: 'neflsp',
      flagShort: 'ah',
      longValue: ['server-num', 'error-file', 'auth-file', 'server-args', 'xauth-protocol'],
      longFlags: ['auto-servernum', 'help'],
    },
  ],
  ['torsocks', { valueShort: 'uPpa', flagShort: 'diq', longFlags: ['shell', ...HELP] }],
  ['proxychains', { valueShort: 'f', flagShort: 'q' }],
  ['proxychains4', { valueShort: 'f', flagShort: 'q' }],
  ['firejail', { valueShort: '', flagShort: '' }],
  [
    'cpulimit',
    {
      valueShort: 'lpe',
      flagShort: 'vzki',
      longValue: ['limit', 'pid', 'exe'],
      longFlags: ['verbose', 'lazy', 'include-children', ...HELP],
    },
  ],
  ['valgrind', { valueShort: '', flagShort: 'qv' }],
  [
    'systemd-run',
    {
      valueShort: 'pEuM',
      flagShort: 'GqPt',
      longValue: [
        'unit',
        'property',
        'description',
        'slice',
        'setenv',
        'uid',
        'gid',
        'working-directory',
        'machine',
        'on-calendar',
        'on-active',
      ],
      longFlags: ['user', 'system', 'scope', 'pty', 'pipe', 'wait', 'collect', 'quiet', 'same-dir', 'shell', ...HELP],
    },
  ],
  ['tsp', { valueShort: 'LDW', flagShort: 'nfgB' }],
  ['nq', { valueShort: '', flagShort: 'cq' }],
  ['with-contenv', { valueShort: '', flagShort: '' }],
  ['caffeinate', { valueShort: 't', flagShort: 'disum' }],
  ['sem', { valueShort: 'j', flagShort: '', longValue: ['jobs', 'id', 'semaphore-timeout'], longFlags: ['fg', 'bg', 'wait'] }],
]);

/** Shells whose `-c` script we can read with the Bash grammar. */
export const BASH_LIKE_SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'ash',
  'ksh',
  'mksh',
  'pdksh',
  'oksh',
  'lksh',
  'zsh',
  'rbash',
  'posh',
  'yash',
  'busybox-sh',
]);
/** Other shells: what they run cannot be read with the Bash grammar. */
export const OTHER_SHELLS = new Set([
  'fish',
  'csh',
  'tcsh',
  'nu',
  'xonsh',
  'elvish',
  'pwsh',
  'powershell',
  'rc',
  'es',
  'ion',
  'oil',
  'osh',
  'ysh',
  'murex',
]);

/** Builtins that cannot run anything by themselves: no allow rule is needed for them. */
export const INERT = new Set([':', 'true', 'false']);

/**
 * Variables whose value the shell runs as code or sources as a file (prompts expand `$(…)` with
 * `set -x` or interactively; BASH_ENV and ENV name files a non-interactive shell sources;
 * SHELLOPTS turns on xtrace in child shells; BASH_FUNC_* defines functions in child shells).
 */
export function runsItsValue(name: string): boolean {
  return /^(PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_XTRACEFD)$/.test(name) || name.startsWith('BASH_FUNC_');
}
