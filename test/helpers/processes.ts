import { readdirSync, readFileSync } from 'node:fs';

/**
 * Live (not zombie) processes on the host whose argv[0] is `name` — started with `exec -a name`,
 * so they can be found from outside a sandbox whose PID namespace hides their numbers.
 */
export function processesNamed(name: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] !== name) continue;
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
      found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}
