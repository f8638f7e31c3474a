/**
 * Loaded by Temporal through `dataConverter.failureConverterPath` (the export must be named
 * `failureConverter`), which is why it is a module of its own: it moves an error's message and
 * stack trace into an encoded payload, which the codec then encrypts. Decoding needs nothing
 * special — every failure converter reads them back. With encryption on, activity workers load it
 * and the workflow bundle includes it, so failures a workflow raises are encrypted too
 * (ARCHITECTURE.md#encryption). It runs inside the workflow sandbox: only `@temporalio/common`.
 */
import { DefaultFailureConverter } from '@temporalio/common';

/** Found in a workflow bundle's code when this module is in it (see `bundleEncryptsFailures`); set on the converter so no bundler drops it. */
export const ENCRYPTING_FAILURE_CONVERTER_MARK = 'durable-agent:encrypting-failure-converter';

export const failureConverter = Object.assign(new DefaultFailureConverter({ encodeCommonAttributes: true }), {
  mark: ENCRYPTING_FAILURE_CONVERTER_MARK,
});
