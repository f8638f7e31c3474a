/**
 * Loaded by Temporal through `dataConverter.failureConverterPath` (the export must be named
 * `failureConverter`), which is why it is a module of its own: it moves an error's message and
 * stack trace into an encoded payload, which the codec then encrypts. Decoding needs nothing
 * special — every failure converter reads them back. Only activity data converters get this path:
 * a `failureConverterPath` given to workflows would be bundled into the workflow sandbox.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
export const ENCRYPTING_FAILURE_CONVERTER_PATH = __filename;
