/**
 * A transport whose protocol library is missing fails the registration itself, with DEPENDENCY_MISSING and the
 * `npm install` command (docs/design/packaging.md#missing-library): also when discovery would not have needed the
 * library (a websocket manual with discovery off). test/packaging/lean-install.test.ts checks the same against a real
 * install without the libraries.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { UtcpClient } from '../../src/index.js';

afterEach(() => {
  vi.doUnmock('ws');
  vi.doUnmock('graphql');
});

function notInstalled(pkg: string) {
  return () => {
    throw Object.assign(new Error(`Cannot find package '${pkg}'`), { code: 'ERR_MODULE_NOT_FOUND' });
  };
}

it('refuses a websocket manual without ws, even with discovery off', async () => {
  vi.doMock('ws', notInstalled('ws'));
  const client = await UtcpClient.create();
  try {
    const result = await client.registerManual({
      name: 'sock',
      call_template_type: 'websocket',
      url: 'ws://127.0.0.1:9/ws',
      discovery_message: null,
    });
    expect(result).toMatchObject({
      success: false,
      errorCode: 'DEPENDENCY_MISSING',
      errors: ['The websocket transport needs ws: npm install ws'],
    });
  } finally {
    await client.close();
  }
});

it('refuses a graphql manual without graphql before any request', async () => {
  vi.doMock('graphql', notInstalled('graphql'));
  const client = await UtcpClient.create();
  try {
    const result = await client.registerManual({
      name: 'gql',
      call_template_type: 'graphql',
      url: 'http://127.0.0.1:9/graphql',
    });
    expect(result).toMatchObject({
      success: false,
      errorCode: 'DEPENDENCY_MISSING',
      errors: ['The graphql transport needs graphql: npm install graphql'],
    });
  } finally {
    await client.close();
  }
});

it('gives no errorCode for a failure without a typed error code', async () => {
  const client = await UtcpClient.create();
  try {
    const result = await client.registerManual({ name: 'bad', call_template_type: 'nope' } as never);
    expect(result.success).toBe(false);
    expect(result.errorCode).toBeUndefined();
  } finally {
    await client.close();
  }
});
