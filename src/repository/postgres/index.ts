/**
 * `utcp-kit/repository/postgres`: a tool catalog on PostgreSQL or PGlite, shared by every process connected
 * to it. See docs/design/repository-postgres.md.
 */
export { PostgresToolRepository } from './postgres-repository.js';
export { postgresOptionsFromConfig, type PostgresToolRepositoryOptions } from './postgres-config.js';
export { MIGRATIONS, type Migration } from './migrations.js';
export type { PgliteLike } from './driver.js';
