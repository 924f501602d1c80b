// A tiny JSON API for benchmarks, run in its own process so it never competes with the client's event loop.
import { createServer } from 'node:http';
const PAYLOAD = JSON.stringify({
  city: 'paris',
  temp_c: 14,
  sky: 'light rain',
  hourly: Array.from({ length: 24 }, (_, h) => ({ h, t: 10 + (h % 7) })),
});
let base = '';
const server = createServer((req, res) => {
  if (req.url === '/utcp') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        utcp_version: '1.0.1',
        manual_version: '1.0.0',
        tools: [
          {
            name: 'weather',
            description: 'Weather for a city',
            inputs: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            tool_call_template: { call_template_type: 'http', url: `${base}/weather`, http_method: 'GET' },
          },
        ],
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(PAYLOAD) });
  res.end(PAYLOAD);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(base + '\n');
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
