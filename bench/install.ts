/**
 * Install footprint (docs/design/packaging.md#measuring): `npm pack` of the built package, then a production install
 * of the tarball into a fresh project (as `npm install utcp-kit`), measured: size of node_modules and number of
 * packages, for an HTTP/OpenAPI/agent user (nothing else installed) and with what each other protocol adds (the
 * command its DEPENDENCY_MISSING error names). Installs use the npm cache first (`--prefer-offline`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Row } from './lib.js';
import {
  installTarball,
  measureInstall,
  OPTIONAL_PARTS,
  packTarball,
  withPeerRanges,
} from '../scripts/lean-install.mjs';

const MB = 1e6;

export async function benchInstall(options: { quick?: boolean } = {}): Promise<Row[]> {
  const packDir = mkdtempSync(join(tmpdir(), 'utcp-bench-pack-'));
  const rows: Row[] = [];
  try {
    const { tarball, size } = await packTarball(packDir);
    const plain = await installTarball(tarball);
    let base;
    try {
      base = measureInstall(plain.dir);
    } finally {
      rmSync(plain.dir, { recursive: true, force: true });
    }
    rows.push(
      {
        suite: 'install',
        case: 'install size, HTTP/OpenAPI/agent user',
        subject: 'utcp-kit',
        unit: 'MB',
        value: base.bytes / MB,
        target: '≤ 15 MB',
        met: base.bytes <= 15 * MB,
        note: `fresh \`npm install <tarball>\` (production); tarball ${(size / MB).toFixed(2)} MB; before the optional peers: 50.6 MB, 157 packages (75 MiB on disk by du; 11 MiB now)`,
      },
      {
        suite: 'install',
        case: 'installed packages, HTTP/OpenAPI/agent user',
        subject: 'utcp-kit',
        unit: 'packages',
        value: base.packages,
        target: '≤ 30',
        met: base.packages <= 30,
        note: `utcp-kit included: ${base.names.join(', ')}; was 157`,
      },
    );
    // --quick: the plain install only (each part is another install of about ten seconds).
    for (const part of options.quick ? [] : OPTIONAL_PARTS) {
      const withPart = await installTarball(tarball, { extra: withPeerRanges(part.packages) });
      try {
        const m = measureInstall(withPart.dir);
        rows.push({
          suite: 'install',
          case: `+ ${part.part}`,
          subject: 'utcp-kit',
          unit: 'MB',
          value: m.bytes / MB,
          note: `npm install ${part.packages.join(' ')}: +${((m.bytes - base.bytes) / MB).toFixed(1)} MB, +${m.packages - base.packages} packages (${m.packages} in all)${part.note ? `; ${part.note}` : ''}`,
        });
      } finally {
        rmSync(withPart.dir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(packDir, { recursive: true, force: true });
  }
  return rows;
}
