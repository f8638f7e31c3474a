/**
 * Structured output (ARCHITECTURE.md#structured-output): a final reply's text checked against the
 * session's JSON schema with Ajv, on the model worker. The draft is the schema's `$schema`
 * (2020-12 — what `z.toJSONSchema()` writes — 2019-09, else draft-07); formats are checked
 * (ajv-formats), never skipped.
 */
import Ajv, { type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ConfigError } from '../../shared/config-error';

type Draft = 'draft-07' | '2019-09' | '2020-12';

const validators = new Map<Draft, Ajv>();
/** Compiled schemas by their JSON: a session's calls reuse one. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 100;

function ajvFor(draft: Draft): Ajv {
  let ajv = validators.get(draft);
  if (!ajv) {
    const opts = { allErrors: true, strict: false };
    ajv = draft === '2020-12' ? new Ajv2020(opts) : draft === '2019-09' ? new Ajv2019(opts) : new Ajv(opts);
    addFormats(ajv);
    validators.set(draft, ajv);
  }
  return ajv;
}

function draftOf(schema: Record<string, unknown>): Draft {
  const id = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (id.includes('2020-12')) return '2020-12';
  if (id.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/** The schema compiled; throws with Ajv's reason when it is not a valid JSON schema. */
function compileOutputSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajvFor(draftOf(schema)).compile(schema as AnySchema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  return validate;
}

/** Why `schema` is not a usable output schema, or null. */
export function outputSchemaProblem(schema: Record<string, unknown>): string | null {
  try {
    compileOutputSchema(schema);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Refuse, before a session starts, an `outputFormat` whose schema Ajv cannot compile, naming the field. */
export function refuseBadOutputSchema(outputFormat: { schema: Record<string, unknown> } | undefined): void {
  const problem = outputFormat && outputSchemaProblem(outputFormat.schema);
  if (problem)
    throw new ConfigError(`invalid session config: outputFormat.schema: not a usable JSON schema: ${problem}`, 'outputFormat.schema');
}

/**
 * The reply's text as the structured output: parsed (a fenced ```json block is unwrapped, as
 * models without `response_format` often answer) and checked, or why it is not one.
 */
export function checkStructuredOutput(text: string, schema: Record<string, unknown>): { value: unknown } | { error: string } {
  const body = unfence(text.trim());
  if (body === '') return { error: 'the reply has no text' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    return { error: `the reply is not JSON (${(e as Error).message})` };
  }
  const validate = compileOutputSchema(schema);
  if (validate(value)) return { value };
  return { error: describeErrors(validate.errors ?? []) };
}

function unfence(text: string): string {
  const m = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(text);
  return m ? m[1]!.trim() : text;
}

/** At most five of Ajv's errors, each with where: "/items/0/price must be number". */
function describeErrors(errors: ErrorObject[]): string {
  const shown = errors.slice(0, 5).map((e) => `${e.instancePath || '(the value)'} ${e.message ?? 'is invalid'}`.trim());
  const more = errors.length > 5 ? `; and ${errors.length - 5} more` : '';
  return `it does not match the schema: ${shown.join('; ')}${more}`;
}
