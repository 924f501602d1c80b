/**
 * The security suite attacks the package as it ships: the built `dist/` (what `npm pack` publishes; `npm test`
 * builds it first), through the public entry only. Types come from the sources, so type-checking needs no build.
 */
import type * as Src from '../../src/index.js';

const kit = (await import(new URL('../../dist/index.js', import.meta.url).href)) as typeof Src;

export const UtcpClient = kit.UtcpClient;
export type UtcpClient = Src.UtcpClient;
export const UtcpError = kit.UtcpError;
export type UtcpError = Src.UtcpError;
export const UtcpArgumentsError = kit.UtcpArgumentsError;
export type UtcpArgumentsError = Src.UtcpArgumentsError;
export const UtcpTimeoutError = kit.UtcpTimeoutError;
export type UtcpTimeoutError = Src.UtcpTimeoutError;
export const McpServerError = kit.McpServerError;
export type McpServerError = Src.McpServerError;
export const GrpcError = kit.GrpcError;
export type GrpcError = Src.GrpcError;
export const TransportError = kit.TransportError;
export type TransportError = Src.TransportError;
