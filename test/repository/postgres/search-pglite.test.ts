import { afterAll } from 'vitest';
import { PostgresToolRepository } from '../../../src/repository/postgres/postgres-repository.js';
import { closeSharedPglite, freshSchema, sharedPglite } from '../../helpers/pglite.js';
import { repositorySearchSuite } from '../search-suite.js';

repositorySearchSuite(
  'Postgres on PGlite',
  async () => new PostgresToolRepository({ pglite: { instance: await sharedPglite() }, schema: freshSchema() }),
  { typos: true },
);
afterAll(closeSharedPglite);
