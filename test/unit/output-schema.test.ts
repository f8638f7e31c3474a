/** The structured-output check the model worker runs (src/activities/model/output-schema.ts). */
import { z } from 'zod';
import { checkStructuredOutput, outputSchemaProblem, refuseBadOutputSchema } from '../../src/activities/model/output-schema';

const draft07 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['n'],
  properties: { n: { type: 'integer' } },
};

test('a reply is parsed and checked; a fenced json block is unwrapped', () => {
  expect(checkStructuredOutput('{"n": 3}', draft07)).toEqual({ value: { n: 3 } });
  expect(checkStructuredOutput('```json\n{"n": 3}\n```', draft07)).toEqual({ value: { n: 3 } });
  expect(checkStructuredOutput('  ```\n{"n": 3}\n```  ', draft07)).toEqual({ value: { n: 3 } });
});

test('what does not match says where and why', () => {
  expect(checkStructuredOutput('', draft07)).toEqual({ error: 'the reply has no text' });
  expect(checkStructuredOutput('Sure! {"n": 3}', draft07)).toMatchObject({ error: expect.stringMatching(/^the reply is not JSON/) });
  expect(checkStructuredOutput('{"n": 3.5}', draft07)).toEqual({ error: 'it does not match the schema: /n must be integer' });
  expect(checkStructuredOutput('{}', draft07)).toEqual({
    error: "it does not match the schema: (the value) must have required property 'n'",
  });
  const many = { type: 'array', items: { type: 'string' } };
  expect(checkStructuredOutput('[1,2,3,4,5,6,7]', many)).toMatchObject({ error: expect.stringMatching(/\/4 must be string; and 2 more$/) });
});

test("the draft is the schema's own: zod's 2020-12 output, with formats checked", () => {
  const schema = z.toJSONSchema(z.object({ when: z.iso.date(), tags: z.array(z.string()).min(1) })) as Record<string, unknown>;
  expect(String(schema.$schema)).toContain('2020-12');
  expect(checkStructuredOutput('{"when": "2026-11-28", "tags": ["a"]}', schema)).toEqual({ value: { when: '2026-11-28', tags: ['a'] } });
  expect(checkStructuredOutput('{"when": "yesterday", "tags": []}', schema)).toMatchObject({
    error: expect.stringMatching(/\/when must match.*\/tags must NOT have fewer than 1 items/),
  });
  // 2020-12's prefixItems: unknown to draft-07, checked here.
  const tuple = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'number' }] };
  expect(checkStructuredOutput('["x"]', tuple)).toMatchObject({ error: expect.stringContaining('/0 must be number') });
});

test('a schema that does not compile is refused by name', () => {
  expect(outputSchemaProblem(draft07)).toBeNull();
  expect(outputSchemaProblem({ type: 'nope' })).toMatch(/type/);
  expect(() => refuseBadOutputSchema({ schema: { properties: { a: { minimum: 'x' } } } })).toThrow(
    expect.objectContaining({
      field: 'outputFormat.schema',
      message: expect.stringMatching(/^invalid session config: outputFormat\.schema: not a usable JSON schema/),
    }),
  );
  expect(() => refuseBadOutputSchema(undefined)).not.toThrow();
});
