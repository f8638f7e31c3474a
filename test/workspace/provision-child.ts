/**
 * A tools worker that dies while provisioning: run with tsx as `provision-child.ts ROOT SESSION URL
 * MARKER`; it writes MARKER once the folder is made in its temp place and waits there to be killed.
 */
import * as fs from 'node:fs';
import { provision } from '../../src/activities/workspace/provision';
import { runGit } from '../../src/activities/workspace/git';

const [root, sessionId, url, marker] = process.argv.slice(2) as [string, string, string, string];
void provision(
  sessionId,
  { git: url, ref: 'main' },
  {
    root,
    git: runGit,
    pause: () => {
      fs.writeFileSync(marker, String(process.pid));
      return new Promise(() => undefined);
    },
  },
);
