/**
 * Libraries every workflow in a worker thread shares instead of evaluating them again for each
 * workflow (ARCHITECTURE.md#shared-libraries): zod, and the map our own schemas are kept in
 * (src/shared/shared-schema.ts). The worker's bundle lists this module in `preloadModules`
 * (src/worker/bundle.ts): it is evaluated once, before any workflow exists, and then frozen. Only stateless libraries belong here: a module that keeps per-workflow state would
 * leak it from one session into another.
 *
 * Referencing the whole namespace keeps every zod module this bundle resolves in the shared
 * cache; naming single functions would let webpack skip the rest (zod is marked side-effect
 * free), and those would be evaluated again per workflow.
 */
import { z } from 'zod';
import { shareAcrossWorkflows } from '../shared/shared-schema';

// zod writes its defaults (the English messages, the parse memoizer) into its global config when
// the first schema is built and parsed. Here that happens before the freeze; left to the first
// session, the write would throw "object is not extensible" in its workflow task.
z.object({ defaults: z.array(z.string()) }).parse({ defaults: [] });

export const sharedZod = z;

// Our own schemas are built by the first workflow that needs each and kept for the rest (src/shared/shared-schema.ts).
shareAcrossWorkflows();
