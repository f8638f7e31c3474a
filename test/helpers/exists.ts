/** "Is it there?" for tests: only not-found means no; any other error fails the test. */
import { readFileSync } from 'node:fs';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { DurableAgentClient } from '../../src/client/client';

/** Whether a workflow with this id exists (in any state). */
export async function workflowExists(client: DurableAgentClient, workflowId: string): Promise<boolean> {
  try {
    await client.client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return false;
    throw e;
  }
}

/** A file's text, or undefined if it does not exist (yet). */
export function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
