import type { GraphqlParser } from './load-modules.js';

export type OperationType = 'query' | 'mutation' | 'subscription';

/**
 * Builds the anonymous document `<op> ($a: T, …) { <field>(a: $a, …) <selection> }` (docs/design/transports.md#graphql).
 * `variableTypes` maps argument names to declared GraphQL types; `( … )` is omitted when empty.
 */
export function buildDocument(
  op: OperationType,
  field: string,
  variableTypes: Record<string, string>,
  selection = '',
): string {
  const names = Object.keys(variableTypes);
  const declared = names.length > 0 ? ` (${names.map((n) => `$${n}: ${variableTypes[n]}`).join(', ')})` : '';
  const passed = names.length > 0 ? `(${names.map((n) => `${n}: $${n}`).join(', ')})` : '';
  return `${op}${declared} { ${field}${passed}${selection ? ` ${selection}` : ''} }`;
}

/**
 * Whether `document` has the shape this transport generates: one anonymous operation whose only
 * root selection is `field` without an alias. Such documents return `data[field]`; others return `data`.
 * An unparsable document counts as custom (the server reports its syntax errors).
 */
export function isGeneratedDocument(parser: GraphqlParser, document: string, field: string): boolean {
  let ast;
  try {
    ast = parser.parse(document, { noLocation: true });
  } catch {
    return false;
  }
  if (ast.definitions.length !== 1) return false;
  const op = ast.definitions[0];
  if (op.kind !== 'OperationDefinition' || op.name) return false;
  const selections = op.selectionSet.selections;
  if (selections.length !== 1) return false;
  const only = selections[0];
  return only.kind === 'Field' && !only.alias && only.name.value === field;
}
