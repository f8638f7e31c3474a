import { checkAgainstSchema } from '../../src/shared/json-schema';

describe('checkAgainstSchema: types', () => {
  test.each<[unknown, string]>([
    [null, 'null'],
    [[1], 'array'],
    [3, 'integer'],
    [3.5, 'number'],
    ['s', 'string'],
    [true, 'boolean'],
    [{}, 'object'],
  ])('%j is reported as %s', (value, name) => {
    expect(checkAgainstSchema(value, { type: 'no-such-type' })).toBe(`input: expected no-such-type, received ${name}`);
  });

  test('an integer satisfies "number", a fraction does not satisfy "integer"', () => {
    expect(checkAgainstSchema(3, { type: 'number' })).toBeNull();
    expect(checkAgainstSchema(3.5, { type: 'integer' })).toBe('input: expected integer, received number');
    expect(checkAgainstSchema(3, { type: 'integer' })).toBeNull();
  });

  test('"integer" is not satisfied by a string that looks like one, "number" not by null', () => {
    expect(checkAgainstSchema('3', { type: 'integer' })).toBe('input: expected integer, received string');
    expect(checkAgainstSchema(null, { type: 'number' })).toBe('input: expected number, received null');
  });

  test('a list of types accepts any of them and names them all', () => {
    expect(checkAgainstSchema(null, { type: ['string', 'null'] })).toBeNull();
    expect(checkAgainstSchema('x', { type: ['string', 'null'] })).toBeNull();
    expect(checkAgainstSchema(1, { type: ['string', 'null'] })).toBe('input: expected string or null, received integer');
  });

  test('a schema without type accepts anything', () => {
    expect(checkAgainstSchema({ a: [1] }, {})).toBeNull();
    expect(checkAgainstSchema(undefined, {})).toBeNull();
  });
});

describe('checkAgainstSchema: values', () => {
  test('enum lists the allowed values as JSON', () => {
    expect(checkAgainstSchema('b', { enum: ['a', 'b'] })).toBeNull();
    expect(checkAgainstSchema('c', { enum: ['a', 1, null] })).toBe('input: expected one of "a", 1, null');
  });

  test('minimum and maximum are inclusive bounds', () => {
    const schema = { type: 'integer', minimum: 1, maximum: 10 };
    expect(checkAgainstSchema(1, schema)).toBeNull();
    expect(checkAgainstSchema(10, schema)).toBeNull();
    expect(checkAgainstSchema(0, schema)).toBe('input: must be >= 1');
    expect(checkAgainstSchema(11, schema)).toBe('input: must be <= 10');
  });

  test('a bound of 0 is still a bound', () => {
    expect(checkAgainstSchema(-1, { minimum: 0 })).toBe('input: must be >= 0');
    expect(checkAgainstSchema(1, { maximum: 0 })).toBe('input: must be <= 0');
  });

  test('bounds apply to numbers only, not to numeric strings', () => {
    expect(checkAgainstSchema('a', { minimum: 5, maximum: 0 })).toBeNull();
    expect(checkAgainstSchema('3', { minimum: 5 })).toBeNull();
    expect(checkAgainstSchema('30', { maximum: 5 })).toBeNull();
  });
});

describe('checkAgainstSchema: arrays and objects', () => {
  test('array items are checked in order and the first bad one is named by index', () => {
    const schema = { type: 'array', items: { type: 'string' } };
    expect(checkAgainstSchema(['a', 'b'], schema)).toBeNull();
    expect(checkAgainstSchema(['a', 2, 3], schema)).toBe('`1`: expected string, received integer');
  });

  test('nested paths are joined with dots', () => {
    const schema = {
      type: 'object',
      properties: { edits: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } },
    };
    expect(checkAgainstSchema({ edits: [{ n: 1 }, { n: 'x' }] }, schema)).toBe('`edits.1.n`: expected integer, received string');
    expect(checkAgainstSchema({ edits: [{ n: 1 }, {}] }, schema)).toBe('`edits.1.n`: required parameter is missing');
    expect(checkAgainstSchema({ edits: [[]] }, schema)).toBe('`edits.0`: expected object, received array');
  });

  test('a required key set to undefined counts as missing; an optional one is skipped', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'] };
    expect(checkAgainstSchema({ a: undefined }, schema)).toBe('`a`: required parameter is missing');
    expect(checkAgainstSchema({ a: 'x', b: undefined }, schema)).toBeNull();
  });

  test('the first missing required key is named, before any type problem', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a', 'b'] };
    expect(checkAgainstSchema({ a: 1 }, schema)).toBe('`b`: required parameter is missing');
  });

  test('unknown keys are refused only with additionalProperties: false', () => {
    const props = { a: { type: 'string' } };
    expect(checkAgainstSchema({ a: 'x', extra: 1 }, { type: 'object', properties: props })).toBeNull();
    expect(checkAgainstSchema({ a: 'x', extra: 1 }, { type: 'object', properties: props, additionalProperties: true })).toBeNull();
    expect(checkAgainstSchema({ a: 'x', extra: 1 }, { type: 'object', properties: props, additionalProperties: false })).toBe(
      '`extra`: unexpected parameter',
    );
    expect(checkAgainstSchema({ o: { extra: 1 } }, { properties: { o: { properties: {}, additionalProperties: false } } })).toBe(
      '`o.extra`: unexpected parameter',
    );
  });

  test('an object without declared properties accepts any key unless closed', () => {
    expect(checkAgainstSchema({ k: 1 }, { type: 'object' })).toBeNull();
    expect(checkAgainstSchema({ k: 1 }, { type: 'object', additionalProperties: false })).toBe('`k`: unexpected parameter');
  });

  test('object rules do not apply to arrays, nor item rules to objects or strings', () => {
    expect(checkAgainstSchema([1], { required: ['a'], additionalProperties: false })).toBeNull();
    expect(checkAgainstSchema({ 0: 1 }, { items: { type: 'string' } })).toBeNull();
    expect(checkAgainstSchema('ab', { items: { type: 'integer' } })).toBeNull();
  });
});

describe('checkAgainstSchema: anyOf', () => {
  const schema = { anyOf: [{ type: 'string' }, { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }] };
  test('accepts a value matching any branch', () => {
    expect(checkAgainstSchema('x', schema)).toBeNull();
    expect(checkAgainstSchema({ n: 1 }, schema)).toBeNull();
  });
  test('otherwise says so at the path', () => {
    expect(checkAgainstSchema({ n: 'x' }, schema)).toBe('input: does not match any allowed shape');
    expect(checkAgainstSchema({ v: 1 }, { properties: { v: schema } })).toBe('`v`: does not match any allowed shape');
  });
});
