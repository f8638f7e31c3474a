import { evaluatePermission, parseRules } from '../../src/shared/permissions';
import { splitBashCommand } from '../../src/shared/permissions/bash-split';
import { commandStart } from '../../src/shared/permissions/bash-words';

describe('splitBashCommand', () => {
  it.each([
    ['one command', 'npm run build', ['npm run build']],
    ['&&', 'echo ok && rm -rf x', ['echo ok', 'rm -rf x']],
    ['||', 'test -f a || rm x', ['test -f a', 'rm x']],
    [';', 'ls; rm x', ['ls', 'rm x']],
    ['newline', 'ls\nrm x', ['ls', 'rm x']],
    ['pipe', 'cat a | rm x', ['cat a', 'rm x']],
    ['|&', 'make |& tee log', ['make', 'tee log']],
    ['background &', 'sleep 1 & rm x', ['sleep 1', 'rm x']],
    ['$(…) runs its command too', 'echo $(rm x)', ['rm x', 'echo $(rm x)']],
    ['$(…) inside double quotes runs', 'echo "$(rm x)"', ['rm x', 'echo "$(rm x)"']],
    ['backticks', 'echo `rm x`', ['rm x', 'echo `rm x`']],
    ['subshell: only the inside runs', '(rm x)', ['rm x']],
    ['subshell with a redirection', '(cd a && rm x) > log', ['cd a', 'rm x']],
    ['process substitution', 'diff <(ls a) <(rm b)', ['ls a', 'rm b', 'diff <(ls a) <(rm b)']],
    ['${…} with a substitution inside', 'echo ${x:-$(rm y)}', ['rm y', 'echo ${x:-$(rm y)}']],
    ['arithmetic is not a command', 'echo $((1 + 2))', ['echo $((1 + 2))']],
    ['assignment with a substitution', 'x=$(rm y) ls', ['rm y', 'x=$(rm y) ls']],
    ['quoted && is one command', 'echo "a && b"', ['echo "a && b"']],
    ['quoted ; is one command', "echo 'a; rm x'", ["echo 'a; rm x'"]],
    ['escaped ; is one command', 'echo a\\; rm x', ['echo a\\; rm x']],
    ['<( is literal inside double quotes', 'echo "<(rm x)"', ['echo "<(rm x)"']],
    ['redirections are not separators', 'npm test 2>&1 >out &>all', ['npm test 2>&1 >out &>all']],
    ['comment', 'ls # && rm x', ['ls']],
    ['keywords are stripped', 'if rm x; then ls; else pwd; fi', ['rm x', 'ls', 'pwd']],
    ['loops: the header runs only its expansions', 'for f in $(ls); do rm "$f"; done', ['ls', 'rm "$f"']],
    ['while', 'while read l; do echo "$l"; done < f', ['read l', 'echo "$l"', '< f']],
    ['negation and groups', '! { rm x; }', ['rm x']],
    ['sh -c runs its script', 'bash -c "ls && rm x"', ['bash -c "ls && rm x"', 'ls', 'rm x']],
    ['sh -o opt -c', "sh -o pipefail -c 'rm x'", ["sh -o pipefail -c 'rm x'", 'rm x']],
    ['eval runs its arguments', "eval 'rm x'", ["eval 'rm x'", 'rm x']],
    ['eval joins its arguments with spaces', 'eval rm -rf x', ['eval rm -rf x', 'rm -rf x']],
    ['zsh -c runs its script', "zsh -c 'rm x'", ["zsh -c 'rm x'", 'rm x']],
    ['dash -c runs its script', "dash -c 'rm x'", ["dash -c 'rm x'", 'rm x']],
    ['ksh -c runs its script', "ksh -c 'rm x'", ["ksh -c 'rm x'", 'rm x']],
    ['-c of a command that is no shell is no script', 'ls -c rm', ['ls -c rm']],
    ['a shell without options', 'bash', ['bash']],
    ['a shell with options but no -c', 'bash -x', ['bash -x']],
    ['a shell running a script file: a later -c is its argument', 'bash my-script.sh -c rm', ['bash my-script.sh -c rm']],
    ['- ends the shell options', 'bash - -c rm', ['bash - -c rm']],
    ['-- ends the shell options', 'bash -- -c rm', ['bash -- -c rm']],
    ['+o takes an option name', 'bash +o posix -c rm', ['bash +o posix -c rm', 'rm']],
    ['-O takes an option name', 'bash -O extglob -c rm', ['bash -O extglob -c rm', 'rm']],
    ['+O takes an option name', 'bash +O extglob -c rm', ['bash +O extglob -c rm', 'rm']],
    ['an option before -c', 'bash -e -c rm', ['bash -e -c rm', 'rm']],
    ['a long option with a c is not -c', 'bash --norc -c rm', ['bash --norc -c rm', 'rm']],
    ['a + option with a c is not -c', 'bash +c rm', ['bash +c rm']],
    ['-c without a script', 'bash -c', ['bash -c']],
    ['here-document body with a substitution runs', 'cat <<EOF\nhi $(rm x)\nEOF\nls', ['cat <<EOF', 'rm x', 'ls']],
    ['quoted here-document delimiter: the body is text', "cat <<'EOF'\n$(rm x)\nEOF", ["cat <<'EOF'"]],
    ['line continuation', 'echo a \\\n b', ['echo a \\\n b']],
    ['here-string: the next line is a command, not a body', 'cat <<<x\nrm -rf /tmp/y', ['cat <<<x', 'rm -rf /tmp/y']],
    ['here-string with a substitution runs it', 'cat <<<"$(rm x)"; ls', ['rm x', 'cat <<<"$(rm x)"', 'ls']],
    ['here-string then a here-document on the same line', 'cat <<<a <<EOF\nhi\nEOF\nrm y', ['cat <<<a <<EOF', 'rm y']],
  ])('%s', (_name, command, expected) => {
    const split = splitBashCommand(command);
    expect(split.problem).toBeUndefined();
    expect(split.parts.map((p) => p.text)).toEqual(expected);
  });

  it.each([
    ['unterminated double quote', 'echo "abc'],
    ['unterminated single quote', "echo 'abc"],
    ['unclosed $(', 'echo $(rm x'],
    ['unclosed backtick', 'echo `rm x'],
    ['unbalanced )', 'ls )'],
    ['function definition', 'f() { rm x; }; f'],
    ['case statement', 'case $x in a) rm x;; esac'],
    ['nested backticks', 'echo `echo \\`rm x\\``'],
  ])('reports what it cannot analyse: %s', (_name, command) => {
    expect(splitBashCommand(command).problem).toEqual(expect.any(String));
  });

  it('marks a command whose name is computed at run time', () => {
    const [part] = splitBashCommand('$CMD -rf x').parts;
    expect(part!.opaque).toMatch(/computed at run time/);
    expect(splitBashCommand('"$(which rm)" x').parts.at(-1)!.opaque).toMatch(/computed/);
    expect(splitBashCommand('eval "$X"').parts.some((p) => p.opaque)).toBe(true);
  });

  it('unquotes words and keeps their offsets in the part text', () => {
    const [part] = splitBashCommand(`git commit -m "fix: a && b" --author='x y'`).parts;
    expect(part!.words.map((w) => w.value)).toEqual(['git', 'commit', '-m', 'fix: a && b', '--author=x y']);
    const w = part!.words[3]!;
    expect(part!.text.slice(w.start, w.end)).toBe('"fix: a && b"');
  });
});

describe('commandStart', () => {
  const start = (command: string, which: 'documented' | 'all') => {
    const [part] = splitBashCommand(command).parts;
    return part!.words
      .slice(commandStart(part!.words, which))
      .map((w) => w.value)
      .join(' ');
  };
  it.each([
    ['timeout 5 npm test', 'npm test', 'npm test'],
    ['timeout --signal=KILL -k 2 30 npm test', 'npm test', 'npm test'],
    ['nohup nice -n 10 stdbuf -o L time -p npm test', 'npm test', 'npm test'],
    ['FOO=1 npm test', 'FOO=1 npm test', 'npm test'],
    ['sudo -u root rm x', 'sudo -u root rm x', 'rm x'],
    ['env -i PATH=/x rm x', 'env -i PATH=/x rm x', 'rm x'],
    ['env - rm x', 'env - rm x', 'rm x'],
    ["/usr/bin/env 'A=1 2' rm x", '/usr/bin/env A=1 2 rm x', 'rm x'],
    ['xargs -n 1 rm', 'xargs -n 1 rm', 'rm'],
    ['>out 2>&1 rm x', '>out 2>&1 rm x', 'rm x'],
    ['> out rm x', '> out rm x', 'rm x'],
    ['command -p rm x', 'command -p rm x', 'rm x'],
    ['doas -u root rm x', 'doas -u root rm x', 'rm x'],
    ['time -f %e rm x', 'rm x', 'rm x'],
    ['env -u HOME rm x', 'env -u HOME rm x', 'rm x'],
    ['exec -a name rm x', 'exec -a name rm x', 'rm x'],
    ['builtin -e cd x', 'builtin -e cd x', 'cd x'],
    ['nohup -e rm x', 'rm x', 'rm x'],
    ['command -e rm x', 'command -e rm x', 'rm x'],
    ['nohup - rm x', '- rm x', '- rm x'],
    ['nohup', '', ''],
    ['nohup FOO=1 rm x', 'FOO=1 rm x', 'rm x'],
    ['timeout -sKILL 5 rm x', 'rm x', 'rm x'],
    ['nohup -x', '', ''],
    ['nohup -- -x y', '-x y', '-x y'],
    ['a-b=1 rm x', 'a-b=1 rm x', 'a-b=1 rm x'],
    ['<in rm x', '<in rm x', 'rm x'],
    ["'a>b' rm x", 'a>b rm x', 'a>b rm x'],
  ])('%s', (command, documented, all) => {
    expect(start(command, 'documented')).toBe(documented);
    expect(start(command, 'all')).toBe(all);
  });
});

describe('here-documents', () => {
  it.each([
    ['<<- strips leading tabs before the delimiter', 'cat <<-EOF\n\tx\n\t\tEOF\nls', ['cat <<-EOF', 'ls']],
    ['without <<-, a tab before the delimiter keeps the body open', 'cat <<EOF\n\tEOF\nls', ['cat <<EOF']],
    ['<<- strips only leading tabs', 'cat <<-EOF\nEO\tF\nEOF\nls', ['cat <<-EOF', 'ls']],
    ['spaces after <<', 'cat << EOF\nbody\nEOF\nls', ['cat << EOF', 'ls']],
    ['a tab after <<', 'cat <<\tEOF\nbody\nEOF\nls', ['cat <<\tEOF', 'ls']],
    ['; ends the delimiter', 'cat <<EOF; ls\nbody\nEOF\npwd', ['cat <<EOF', 'ls', 'pwd']],
    ['| ends the delimiter', 'cat <<EOF|wc\nbody\nEOF', ['cat <<EOF', 'wc']],
    ['a double-quoted delimiter: the body is text', 'cat <<"EOF"\n$(rm x)\nEOF\nls', ['cat <<"EOF"', 'ls']],
    ['a partly quoted delimiter', 'cat <<E"OF"\n$(rm x)\nEOF\nls', ['cat <<E"OF"', 'ls']],
    ['a backslash-quoted delimiter', 'cat <<\\EOF\n$(rm x)\nEOF\nls', ['cat <<\\EOF', 'ls']],
    ['a body without its delimiter runs to the end, scanned', 'cat <<EOF\nhi $(rm x)', ['cat <<EOF', 'rm x']],
    ['the delimiter as the last line, without a newline', 'cat <<EOF\nx\nEOF', ['cat <<EOF']],
    ['two here-documents on one line', 'cat <<A <<B\n$(ls)\nA\n$(rm x)\nB\npwd', ['cat <<A <<B', 'ls', 'rm x', 'pwd']],
    ['a quoted delimiter after an unquoted one', "cat <<A <<'B'\n$(ls)\nA\n$(rm x)\nB", ["cat <<A <<'B'", 'ls']],
    ['backticks in the body run', 'cat <<EOF\n`rm x`\nEOF', ['cat <<EOF', 'rm x']],
    ['an escaped $ in the body is text', 'cat <<EOF\n\\$(rm x)\nEOF\nls', ['cat <<EOF', 'ls']],
    ['a lone $ in the body', 'cat <<EOF\ncost: $ 5 $(rm x)\nEOF', ['cat <<EOF', 'rm x']],
  ])('%s', (_name, command, expected) => {
    const split = splitBashCommand(command);
    expect(split.problem).toBeUndefined();
    expect(split.parts.map((p) => p.text)).toEqual(expected);
  });

  it.each([
    ['an unterminated quote in the delimiter', "cat <<'EOF\nx", 'unterminated quote in here-document delimiter'],
    ['no delimiter', 'cat <<', 'here-document without a delimiter'],
    ['no delimiter before ;', 'cat << ; ls', 'here-document without a delimiter'],
    ['only a backslash', 'cat <<\\', 'here-document without a delimiter'],
  ])('%s', (_name, command, problem) => {
    expect(splitBashCommand(command).problem).toBe(problem);
  });
});

describe('splitBashCommand: quotes, expansions and problems in detail', () => {
  it('a backslash inside double quotes escapes only $ ` " \\ and a newline', () => {
    const [part] = splitBashCommand('echo "a\\"b" "c\\$d" "e\\\\f" "g\\h" "i\\\nj"').parts;
    expect(part!.words.map((w) => w.value)).toEqual(['echo', 'a"b', 'c$d', 'e\\f', 'g\\h', 'ij']);
  });

  it('single quotes inside ${…} hide a substitution', () => {
    expect(splitBashCommand("echo ${x:-'$(rm y)'}").parts.map((p) => p.text)).toEqual(["echo ${x:-'$(rm y)'}"]);
    expect(splitBashCommand("echo ${x:-'a}").problem).toBe('unterminated single quote');
    // …but not inside $((…)): bash runs a substitution there even between single quotes.
    expect(splitBashCommand("echo $((1 + '$(rm x)'))").parts.map((p) => p.text)).toEqual(['rm x', "echo $((1 + '$(rm x)'))"]);
  });

  it.each([
    ['echo ${x', "unclosed '${'"],
    ['echo $((1 + 2', "unclosed '$(('"],
  ])('%j: %s', (command, problem) => {
    expect(splitBashCommand(command).problem).toBe(problem);
  });

  it('sh -c with a script that cannot be analysed is opaque, saying why', () => {
    expect(splitBashCommand(`sh -c 'echo "oops'`).parts[0]!.opaque).toBe(
      'the script it runs cannot be analysed: unterminated double quote',
    );
  });
});

describe('redirections inside a word', () => {
  const words = (command: string) => {
    const split = splitBashCommand(command);
    expect(split.problem).toBeUndefined();
    return split.parts.map((p) => p.words.map((w) => w.value));
  };
  it.each([
    ['> ends the command word', 'rm>log -rf x', [['rm', '>log', '-rf', 'x']]],
    ['< ends it', 'rm<in -rf x', [['rm', '<in', '-rf', 'x']]],
    ['>> ends it', 'rm>>log -rf x', [['rm', '>>log', '-rf', 'x']]],
    ['>| ends it, and | is part of the operator', 'rm>|log -rf x', [['rm', '>|log', '-rf', 'x']]],
    ['<> ends it', 'rm<>f -rf x', [['rm', '<>f', '-rf', 'x']]],
    ['&> ends it', 'rm&>log -rf x', [['rm', '&>log', '-rf', 'x']]],
    ['&>> ends it', 'rm&>>log -rf x', [['rm', '&>>log', '-rf', 'x']]],
    ['<<< ends it', 'rm<<<x -rf y', [['rm', '<<<x', '-rf', 'y']]],
    ['<< ends it', 'rm<<EOF -rf x\nb\nEOF', [['rm', '<<EOF', '-rf', 'x']]],
    ['>& and <& are operators', 'rm>&2 x<&3', [['rm', '>&2', 'x', '<&3']]],
    ['a file descriptor stays with its operator', 'ls 2>err 10>>o 3<<EOF\nb\nEOF', [['ls', '2>err', '10>>o', '3<<EOF']]],
    ['{name} is a file descriptor too', 'ls {fd}>o', [['ls', '{fd}>o']]],
    ['a word ending in digits is no file descriptor', 'ls x2>o', [['ls', 'x2', '>o']]],
    ['a quoted number is no file descriptor', 'ls "2">o', [['ls', '2', '>o']]],
    ['&> ends a number too', 'ls 2&>o', [['ls', '2', '&>o']]],
    ['an assignment ends at >', 'a=1>o ls', [['a=1', '>o', 'ls']]],
    ['two redirections in one run of text', 'ls >a<b', [['ls', '>a', '<b']]],
    ['a quoted > is text', 'echo \'a>b\' "c<d"', [['echo', 'a>b', 'c<d']]],
    ['an escaped > is text', 'echo a\\>b', [['echo', 'a>b']]],
    [
      '& after an escaped > runs in the background',
      'echo a\\>& rm -rf x',
      [
        ['echo', 'a>'],
        ['rm', '-rf', 'x'],
      ],
    ],
    [
      '<( inside a word is a substitution, not a redirection',
      'echo a<(rm x)',
      [
        ['rm', 'x'],
        ['echo', 'a<(rm x)'],
      ],
    ],
  ])('%s', (_name, command, expected) => {
    expect(words(command)).toEqual(expected);
  });

  it.each([
    ['rm>log -rf x', 'rm >log -rf x'],
    ['{fd}>log rm -rf x', 'rm -rf x'],
    ['3<<EOF rm -rf x\nb\nEOF', 'rm -rf x'],
    ['>& f rm -rf x', 'rm -rf x'],
    ['<> f rm -rf x', 'rm -rf x'],
    ['>| f rm -rf x', 'rm -rf x'],
    ['<& 3 rm -rf x', 'rm -rf x'],
    ['&>> f rm -rf x', 'rm -rf x'],
    ['<<< f rm -rf x', 'rm -rf x'],
  ])('commandStart past %j', (command, expected) => {
    const [part] = splitBashCommand(command).parts;
    const rest = part!.words.slice(commandStart(part!.words, 'all'));
    expect(rest.map((w) => w.value).join(' ')).toBe(expected);
  });

  it.each([
    'rm>log -rf x',
    'rm<in -rf x',
    'rm>>log -rf x',
    'rm&>log -rf x',
    'rm<<<x -rf y',
    'rm>|log -rf x',
    'rm<>f -rf x',
    '{fd}>log rm -rf x',
    '3<<EOF rm -rf x\nb\nEOF',
    'echo a\\>& rm -rf x',
    '>& f rm -rf x',
    '<> f rm -rf x',
    '<& 3 rm -rf x',
  ])('deny Bash(rm:*) catches %j', (command) => {
    const d = evaluatePermission({
      toolName: 'Bash',
      input: { command },
      readOnly: false,
      mode: 'default',
      rules: parseRules({ allow: ['Bash'], deny: ['Bash(rm:*)'] }),
      workspace: { cwd: '/proj', homeDir: '/home/u', additionalDirectories: [] },
    });
    expect(d).toMatchObject({ behavior: 'deny', reason: 'rule' });
    expect(d.matched[0]).toMatchObject({ rule: 'Bash(rm:*)' });
    expect(d.matched[0]!.unchecked).toBeUndefined();
  });
});

describe('splitBashCommand: the corners the mutants found', () => {
  const texts = (command: string) => {
    const split = splitBashCommand(command);
    expect(split.problem).toBeUndefined();
    return split.parts.map((p) => p.text);
  };
  const words = (command: string) => {
    const split = splitBashCommand(command);
    expect(split.problem).toBeUndefined();
    return split.parts.map((p) => p.words.map((w) => w.value));
  };

  it('eval inside eval: twelve levels are analysed, the thirteenth is opaque', () => {
    const twelve = splitBashCommand(`${'eval '.repeat(12)}rm x`);
    expect(twelve.problem).toBeUndefined();
    expect(twelve.parts.map((p) => p.text)).toEqual([...Array.from({ length: 12 }, (_, k) => `${'eval '.repeat(12 - k)}rm x`), 'rm x']);
    expect(twelve.parts.filter((p) => p.opaque)).toEqual([]);
    const thirteen = splitBashCommand(`${'eval '.repeat(13)}rm x`);
    expect(thirteen.problem).toBeUndefined();
    expect(thirteen.parts).toHaveLength(13);
    expect(thirteen.parts.map((p) => p.opaque)).toEqual([
      ...Array<undefined>(12).fill(undefined),
      'the script it runs cannot be analysed: nested too deeply',
    ]);
    expect(thirteen.parts[12]!.text).toBe('eval rm x');
  });

  it('$(…) inside $(…): twelve levels are analysed, thirteen are too deep', () => {
    const nest = (n: number) => `${'echo $('.repeat(n)}rm x${')'.repeat(n)}`;
    const twelve = splitBashCommand(nest(12));
    expect(twelve.problem).toBeUndefined();
    expect(twelve.parts[0]!.text).toBe('rm x');
    expect(twelve.parts).toHaveLength(13);
    expect(splitBashCommand(nest(13)).problem).toBe('nested too deeply');
  });

  it('a line continuation joins the text around it', () => {
    expect(words('r\\\nm -rf x')).toEqual([['rm', '-rf', 'x']]);
    expect(words('echo a \\\n b')).toEqual([['echo', 'a', 'b']]);
  });

  it('a backslash outside backticks escapes a backtick; inside, other characters', () => {
    expect(words('echo \\`')).toEqual([['echo', '`']]);
    expect(words('echo `echo a\\ b`')).toEqual([
      ['echo', 'a b'],
      ['echo', '`echo a\\ b`'],
    ]);
  });

  it('a trailing backslash is kept, as bash does', () => {
    expect(words('echo a\\')).toEqual([['echo', 'a\\']]);
  });

  it.each([
    ['a backslash', '\\if x'],
    ['single quotes', "'if' x"],
    ['double quotes', '"if" x'],
  ])('a keyword written with %s is a command name', (_name, command) => {
    const [part] = splitBashCommand(command).parts;
    expect(part!.text).toBe(command);
    expect(part!.words.map((w) => w.plain)).toEqual([false, true]);
  });

  it('spaces, tabs and carriage returns end words', () => {
    expect(words('a b\tc\rd')).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('an unquoted substitution: its text is the word, and a command name computed from it is opaque', () => {
    const [inner, part] = splitBashCommand('$(echo rm) -rf x').parts;
    expect(inner!.text).toBe('echo rm');
    expect(part!.words.map((w) => [w.value, w.dynamic])).toEqual([
      ['$(echo rm)', true],
      ['-rf', false],
      ['x', false],
    ]);
    expect(part!.opaque).toBe('the command name is computed at run time');
  });

  it('( after a keyword opens a subshell; after any other word it is not analysed', () => {
    expect(texts('if (rm x); then ls; fi')).toEqual(['rm x', 'ls']);
    const why = "'(' after a word (a function definition, array or arithmetic loop) is not analysed";
    expect(splitBashCommand('echo (x)').problem).toBe(why);
    expect(splitBashCommand("'if' (x)").problem).toBe(why);
    expect(splitBashCommand('echo $a(b)').problem).toBe(why);
  });

  it.each([
    ['ls )', "unbalanced ')' (case statements are not analysed)"],
    ["echo 'abc", 'unterminated single quote'],
    ['echo "abc', 'unterminated double quote'],
    ['(ls', "unclosed '('"],
    ['echo $(rm x', "unclosed '('"],
    ['echo `rm x', 'unclosed backtick'],
    ['echo `echo \\`rm x\\``', 'nested backticks'],
    ['echo $((1 + 2) )', "unclosed '$(('"],
  ])('%j: %s', (command, problem) => {
    expect(splitBashCommand(command).problem).toBe(problem);
  });

  it('# starts a comment only at the start of a word, and the comment ends at the line', () => {
    expect(words('echo a#b')).toEqual([['echo', 'a#b']]);
    expect(texts('ls # c\nrm x')).toEqual(['ls', 'rm x']);
  });

  it.each([
    ['||', 'ls ||&>x cat', ['ls', '&>x cat']],
    ['|&', 'ls |&>x cat', ['ls', '>x cat']],
    [';&', 'ls ;&>x cat', ['ls', '>x cat']],
    ['&&', 'ls &&>x cat', ['ls', '>x cat']],
    ['; then a command', 'ls;rm x', ['ls', 'rm x']],
    ['& then a command', 'ls&rm x', ['ls', 'rm x']],
  ])('%s is one operator, and nothing after it is skipped', (_name, command, expected) => {
    expect(texts(command)).toEqual(expected);
  });

  it('backticks run inside double quotes', () => {
    expect(texts('echo "`rm x`"')).toEqual(['rm x', 'echo "`rm x`"']);
  });

  it('a substitution inside double quotes is read once, to its own end', () => {
    expect(texts('echo "$(echo $(rm x))"')).toEqual(['rm x', 'echo $(rm x)', 'echo "$(echo $(rm x))"']);
    expect(texts('echo "$(echo ")")"')).toEqual(['echo ")"', 'echo "$(echo ")")"']);
    expect(words('echo "a$(ls)b"')).toEqual([['ls'], ['echo', 'a$(ls)b']]);
  });

  it('only $ makes a double-quoted word dynamic', () => {
    expect(splitBashCommand('"$CMD" -rf x').parts[0]!.opaque).toBe('the command name is computed at run time');
    const [part] = splitBashCommand('"rm" -rf x').parts;
    expect(part!.opaque).toBeUndefined();
    expect(part!.words[0]).toMatchObject({ value: 'rm', dynamic: false, plain: false });
  });

  it('>(…) is a process substitution', () => {
    expect(texts('tee >(rm x)')).toEqual(['rm x', 'tee >(rm x)']);
  });

  it('parentheses nest inside $((…)), braces inside ${…}', () => {
    expect(texts('echo $(( (1 + 2) * 3 ))')).toEqual(['echo $(( (1 + 2) * 3 ))']);
    expect(texts('echo $(( $(echo 1) ))')).toEqual(['echo 1', 'echo $(( $(echo 1) ))']);
    expect(texts('echo ${x:-a;b}')).toEqual(['echo ${x:-a;b}']);
    expect(texts('echo ${x:-\\}; rm y}')).toEqual(['echo ${x:-\\}; rm y}']);
    expect(texts('echo ${x:-\\$(rm y)}')).toEqual(['echo ${x:-\\$(rm y)}']);
    expect(texts('echo ${x:-$(echo })}')).toEqual(['echo }', 'echo ${x:-$(echo })}']);
  });

  it("a later part's word offsets are in its own text", () => {
    const [, part] = splitBashCommand('ls; git commit -m "a b"').parts;
    expect(part!.text).toBe('git commit -m "a b"');
    expect(part!.words.map((w) => part!.text.slice(w.start, w.end))).toEqual(['git', 'commit', '-m', '"a b"']);
  });

  it.each(['function', 'select', 'coproc'])('a part starting with %s is opaque', (keyword) => {
    const [part] = splitBashCommand(`${keyword} f x`).parts;
    expect(part).toMatchObject({ text: `${keyword} f x`, opaque: `'${keyword}' constructs are not analysed` });
  });

  it('sh -c after an assignment or a redirection still runs its script', () => {
    expect(texts("X=1 bash -c 'rm y'")).toEqual(["X=1 bash -c 'rm y'", 'rm y']);
    expect(texts(">o bash -c 'rm y'")).toEqual([">o bash -c 'rm y'", 'rm y']);
  });
});
