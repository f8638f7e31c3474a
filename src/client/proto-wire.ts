/**
 * The protobuf wire format, just enough to call one server API that has no TypeScript
 * definitions in the SDK (the admin service's DescribeMutableState, src/client/stalled.ts):
 * encode a message of strings, booleans and nested messages, and read fields by number.
 */

/** A field to encode: strings and nested messages are length-delimited, booleans varints. */
export type WireField = [fieldNumber: number, value: string | boolean | WireField[] | undefined];

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

export function encodeMessage(fields: WireField[]): Buffer {
  const parts: Buffer[] = [];
  for (const [no, value] of fields) {
    if (value === undefined) continue;
    if (typeof value === 'boolean') {
      parts.push(Buffer.from([...varint(no << 3), value ? 1 : 0]));
      continue;
    }
    const body = typeof value === 'string' ? Buffer.from(value, 'utf8') : encodeMessage(value);
    parts.push(Buffer.from([...varint((no << 3) | 2), ...varint(body.length)]), body);
  }
  return Buffer.concat(parts);
}

/** Each field of a message in order: varints as numbers, length-delimited fields as their bytes (fixed-width ones skipped). */
export function decodeFields(buf: Uint8Array): { no: number; value: number | Uint8Array }[] {
  const fields: { no: number; value: number | Uint8Array }[] = [];
  let i = 0;
  const readVarint = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (i >= buf.length) throw new Error('protobuf: truncated varint');
      const b = buf[i++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 128;
    }
  };
  while (i < buf.length) {
    const key = readVarint();
    const no = Math.floor(key / 8);
    const type = key & 7;
    if (type === 0) fields.push({ no, value: readVarint() });
    else if (type === 2) {
      const len = readVarint();
      if (i + len > buf.length) throw new Error('protobuf: truncated field');
      fields.push({ no, value: buf.subarray(i, i + len) });
      i += len;
    } else if (type === 1) i += 8;
    else if (type === 5) i += 4;
    else throw new Error(`protobuf: unsupported wire type ${type}`);
  }
  return fields;
}

/** The bytes of the last length-delimited field `path[0]`, then within it `path[1]`, …; undefined if any is absent. */
function fieldBytes(buf: Uint8Array, path: number[]): Uint8Array | undefined {
  let at: Uint8Array | undefined = buf;
  for (const no of path) {
    const found: { no: number; value: number | Uint8Array } | undefined = decodeFields(at)
      .filter((f) => f.no === no && typeof f.value !== 'number')
      .pop();
    at = found?.value as Uint8Array | undefined;
    if (!at) return undefined;
  }
  return at;
}

export const fieldString = (buf: Uint8Array, path: number[]): string | undefined => {
  const b = fieldBytes(buf, path);
  return b === undefined ? undefined : Buffer.from(b).toString('utf8');
};
