/**
 * Structured output (ARCHITECTURE.md#structured-output): `outputFormat` goes to the provider as
 * `response_format` on every call of the turn, the final reply is checked against the schema on
 * the model worker, a reply that does not match is sent back with why, and the result carries the
 * value as `structured_output` — or ends `error_max_structured_output_retries`.
 */
import { z } from 'zod';
import { query } from '../../src/sdk/query';
import type { QueryMessage, ResultMessage } from '../../src/shared/events';
import { textOf } from '../../src/shared/messages';
import { turn } from '../../src/testing/scripted-model';
import type { TurnInput } from '../../src/testing/scenario';
import { OUTPUT_RETRIES } from '../../src/workflows/session/turn';
import { scenarioTag, useHarness } from '../helpers/harness';

const h = useHarness();

// What SDK users write: a zod schema turned into JSON Schema (draft 2020-12).
const Company = z.object({ name: z.string(), founded: z.number().int(), site: z.string().url() });
const schema = z.toJSONSchema(Company) as Record<string, unknown>;
const outputFormat = { type: 'json_schema' as const, schema };
const bypass = { permissionMode: 'bypassPermissions', allowDangerouslySkipPermissions: true } as const;

async function run(name: string, turns: TurnInput[]): Promise<QueryMessage[]> {
  h.model.addScenario({ name, turns });
  const out: QueryMessage[] = [];
  for await (const m of query({
    prompt: `${scenarioTag(name)} research`,
    options: { cwd: h.workspace(), client: h.client, outputFormat, ...bypass },
  })) {
    out.push(m);
  }
  return out;
}

const valid = { name: 'Anthropic', founded: 2021, site: 'https://www.anthropic.com' };

test('the final reply is the structured output: sent as response_format, checked, and sent back with why until it matches', async () => {
  const messages = await run('structured', [
    turn.tool('Glob', { pattern: '*' }, { text: 'Looking first.' }),
    turn.text('The company is Anthropic, founded 2021.'),
    turn.text(JSON.stringify({ name: 'Anthropic', founded: '2021', site: 'not a url' })),
    turn.text('```json\n' + JSON.stringify(valid, null, 2) + '\n```'),
  ]);
  h.model.assertConsumed('structured');
  const result = messages.at(-1) as ResultMessage;
  expect(result).toMatchObject({ type: 'result', subtype: 'success', structured_output: valid });

  const requests = h.requestsOf('structured');
  expect(requests).toHaveLength(4);
  // Every call of the turn carries the schema: a model that answers without tools answers in it.
  for (const r of requests) {
    expect(r.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'structured_output', schema } });
  }
  // Each reply that did not match came back to the model with why, as the next user message.
  const lastUser = (i: number) => {
    const users = requests[i]!.body.messages.filter((m) => m.role === 'user');
    return String(typeof users.at(-1)!.content === 'string' ? users.at(-1)!.content : JSON.stringify(users.at(-1)!.content));
  };
  expect(lastUser(2)).toMatch(/only a JSON value that matches the output schema.*the reply is not JSON/s);
  expect(lastUser(3)).toContain('/founded must be integer');
  expect(lastUser(3)).toContain('/site must match format "uri"');
  // The replies themselves are in the stream as they were.
  const texts = messages.flatMap((m) => (m.type === 'assistant' ? [textOf(m.message.content)] : []));
  expect(texts[1]).toBe('The company is Anthropic, founded 2021.');
});

test(`a final reply that never matches ends the turn with error_max_structured_output_retries after ${OUTPUT_RETRIES} retries`, async () => {
  const bad = JSON.stringify({ name: 'Anthropic' });
  const messages = await run(
    'structured-never',
    Array.from({ length: OUTPUT_RETRIES + 1 }, () => turn.text(bad)),
  );
  h.model.assertConsumed('structured-never');
  const result = messages.at(-1) as ResultMessage;
  expect(result).toMatchObject({ type: 'result', subtype: 'error_max_structured_output_retries', is_error: true });
  expect(result).not.toHaveProperty('structured_output');
  expect(result.errors).toContain(`The final reply did not match the output schema after ${OUTPUT_RETRIES} retries.`);
  expect(h.requestsOf('structured-never')).toHaveLength(OUTPUT_RETRIES + 1);
});

test('a schema Ajv cannot compile is refused at start, naming the field; nothing starts', async () => {
  const before = h.model.requests.length;
  const q = query({
    prompt: 'never sent',
    options: {
      cwd: h.workspace(),
      client: h.client,
      outputFormat: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'no-such-type' } } } },
    },
  });
  await expect(q.next()).rejects.toThrow(
    /^invalid session config: outputFormat\.schema: not a usable JSON schema: .*no-such-type|outputFormat\.schema: not a usable JSON schema/,
  );
  // And with requireDoneTool, which would make the result two things at once.
  const both = query({ prompt: 'never sent', options: { cwd: h.workspace(), client: h.client, outputFormat, requireDoneTool: true } });
  await expect(both.next()).rejects.toThrow(/outputFormat: cannot be combined with requireDoneTool/);
  expect(h.model.requests.length).toBe(before);
});
