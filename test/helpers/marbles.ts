/** Helpers shared by the marble tests of the operators (not a test file itself). */
import { TestScheduler } from 'rxjs/testing';
import { expect } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.js';

/** A TestScheduler whose frames are compared with vitest's deep equality. */
export const newScheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** The error an upstream answer with this status becomes (optionally with its response headers). */
export const upstreamError = (status: number, headers?: Record<string, string>): GatewayError =>
  new GatewayError('upstream_error', `upstream ${status}`, { status, ...(headers ? { headers } : {}) });
