/**
 * The payload guard (ARCHITECTURE.md#continue-as-new): server 1.29 terminates a workflow whose payload exceeds the
 * 2 MiB blob limit, so everything the workflow produces or receives is measured first. Pure and
 * Buffer-free: it runs in the workflow sandbox as well as on workers.
 */

/** 1.5 MiB: leaves room under the 2 MiB blob limit for the envelope and metadata. */
export const MAX_PAYLOAD_BYTES = 1.5 * 1024 * 1024;

/**
 * UTF-8 byte length of a string, counted without encoding it. A lone surrogate counts 3 bytes,
 * as TextEncoder writes it (U+FFFD).
 */
export function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** UTF-8 byte length of `x` as JSON (what the default payload converter writes); 0 for undefined. */
export function jsonBytes(x: unknown): number {
  const json = JSON.stringify(x);
  return json === undefined ? 0 : utf8Length(json);
}

export function fitsPayload(x: unknown, maxBytes = MAX_PAYLOAD_BYTES): boolean {
  return jsonBytes(x) <= maxBytes;
}

/**
 * `text` unchanged if it fits in `maxBytes` (UTF-8); otherwise its longest prefix that, followed
 * by `note`, fits — never splitting a character. If even `note` does not fit, a prefix of `note`.
 */
export function truncateToBytes(text: string, maxBytes: number, note: string): string {
  if (utf8Length(text) <= maxBytes) return text;
  const noteBytes = utf8Length(note);
  if (noteBytes > maxBytes) return prefixWithin(note, maxBytes);
  return prefixWithin(text, maxBytes - noteBytes) + note;
}

function prefixWithin(s: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1));
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += pair ? 2 : 1;
  }
  return s.slice(0, i);
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
