import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it, vi } from 'vitest';

it('turns a missing MCP SDK into a DEPENDENCY_MISSING error with an install hint', async () => {
  vi.doMock('@modelcontextprotocol/client', () => {
    throw new Error("Cannot find package '@modelcontextprotocol/client'");
  });
  const { loadMcpSdk } = await import('../../src/transports/mcp/load-mcp-sdk.js');
  await expect(loadMcpSdk()).rejects.toMatchObject({
    code: 'DEPENDENCY_MISSING',
    message: 'The mcp transport needs @modelcontextprotocol/client: npm install @modelcontextprotocol/client',
  });
  vi.doUnmock('@modelcontextprotocol/client');
});

it('imports the MCP SDK only through load-mcp-sdk.ts (type-only imports elsewhere)', () => {
  const dir = fileURLToPath(new URL('../../src/transports/mcp/', import.meta.url));
  const offenders: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join(dir, file), 'utf8');
    // Whole statements, so an import the formatter spreads over several lines is read as one.
    for (const [statement] of source.matchAll(/^(?:import|export)\b[^;]*?from '@modelcontextprotocol\/[^']*';/gms)) {
      if (!/^(?:import|export) type\b/.test(statement)) offenders.push(`${file}: ${statement.replace(/\s+/g, ' ')}`);
    }
    for (const line of source.split('\n')) {
      if (/import\('@modelcontextprotocol\//.test(line) && file !== 'load-mcp-sdk.ts')
        offenders.push(`${file}: ${line}`);
    }
  }
  expect(offenders).toEqual([]);
});
