import { UtcpClient } from '../dist/index.js';
import { createServer } from 'node:http';
const D = +process.argv[2] || 100000;
const deepSchema = '{"type":"object","properties":{"p":'.repeat(D) + '{"type":"string"}' + '}}'.repeat(D);
const deepExample = '{"a":'.repeat(D) + '1' + '}'.repeat(D);
const docs = {
  schema: `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"servers":[{"url":"https://api.example.test"}],"paths":{"/x":{"post":{"operationId":"x","requestBody":{"content":{"application/json":{"schema":${deepSchema}}}},"responses":{"200":{"description":"ok"}}}}}}`,
  example: `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"servers":[{"url":"https://api.example.test"}],"paths":{"/x":{"post":{"operationId":"x","requestBody":{"content":{"application/json":{"schema":{"type":"object","example":${deepExample}},"example":${deepExample}}}},"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object"},"example":${deepExample}}}}}}}}}`,
  param: `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"servers":[{"url":"https://api.example.test"}],"paths":{"/x":{"get":{"operationId":"x","parameters":[{"name":"q","in":"query","schema":${deepSchema}}],"responses":{"200":{"description":"ok","content":{"application/json":{"schema":${deepSchema}}}}}}}}}`,
};
for (const [label, body] of Object.entries(docs)) {
  const server = createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(body); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const client = await UtcpClient.create({});
  try {
    const r = await client.registerManual({ name: 'm', call_template_type: 'http', url: `http://127.0.0.1:${server.address().port}/openapi.json`, http_method: 'GET' });
    console.log(label, 'errors:', r.errors.map((e) => String(e).slice(0, 160)), 'tools', r.manual.tools.length, 'warnings', r.warnings.map(w=>w.slice(0,100)));
    if (r.manual.tools.length) console.log('  call', await client.callTool('m.x', {}, { timeoutMs: 2000 }).then(() => 'ok', (e) => e.name + ' ' + e.message.slice(0, 150)));
  } catch (e) { console.log(label, 'THREW', e.name, e.message.slice(0, 200)); }
  await client.close(); server.close();
}
