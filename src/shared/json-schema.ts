/**
 * A small JSON-Schema checker for tool arguments, usable in workflow code. It covers what tool
 * schemas use (type, required, properties, enum, items, additionalProperties, min/max) so a bad
 * call is answered with an error result before any permission prompt or activity; the tool's own
 * zod schema on the worker remains the full check.
 */
type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
  minimum?: number;
  maximum?: number;
  anyOf?: Schema[];
};

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(expected: string, actual: string): boolean {
  return expected === actual || (expected === 'number' && actual === 'integer');
}

/** Returns the first problem ("`timeout`: expected number, received string") or null. */
export function checkAgainstSchema(value: unknown, schema: Schema, path = ''): string | null {
  const at = path ? `\`${path}\`` : 'input';
  if (schema.anyOf) {
    return schema.anyOf.some((s) => checkAgainstSchema(value, s, path) === null) ? null : `${at}: does not match any allowed shape`;
  }
  const actual = typeOf(value);
  if (schema.type) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, actual))) return `${at}: expected ${types.join(' or ')}, received ${actual}`;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    return `${at}: expected one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${at}: must be >= ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${at}: must be <= ${schema.maximum}`;
  }
  if (actual === 'array' && schema.items) {
    const arr = value as unknown[];
    for (let i = 0; i < arr.length; i++) {
      const err = checkAgainstSchema(arr[i], schema.items, path ? `${path}.${i}` : String(i));
      if (err) return err;
    }
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (obj[key] === undefined) return `\`${path ? `${path}.` : ''}${key}\`: required parameter is missing`;
    }
    for (const [key, v] of Object.entries(obj)) {
      const sub = schema.properties?.[key];
      const child = path ? `${path}.${key}` : key;
      if (sub) {
        if (v === undefined) continue;
        const err = checkAgainstSchema(v, sub, child);
        if (err) return err;
      } else if (schema.additionalProperties === false) {
        return `\`${child}\`: unexpected parameter`;
      }
    }
  }
  return null;
}
