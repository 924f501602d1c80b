/** Local listeners the network tests share: every one on 127.0.0.1 port 0, closed when the test finishes. */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

/** Listens on 127.0.0.1 port 0 (an HTTP server is a net.Server too); closed when the test finishes. */
export async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as { port: number }).port;
}

/** A TCP listener that counts connections (any protocol) and drops them: proves whether anything reached it. */
export async function connectionCounter(): Promise<{ port: number; count(): number }> {
  let n = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    n += 1;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.destroy();
  });
  const port = await listen(server);
  onTestFinished(() => {
    for (const s of sockets) s.destroy();
  });
  return { port, count: () => n };
}
