/**
 * A calculator over gRPC (@grpc/grpc-js on 127.0.0.1, port 0) implementing `grpcpb.UTCPService`
 * from utcp.proto: GetManual lists the tools, CallTool answers with JSON, CallToolStream streams
 * `countdown`. Failures are gRPC statuses (INVALID_ARGUMENT, NOT_FOUND).
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';

interface CallRequest {
  tool: string;
  args_json: string;
}

const PROTO = fileURLToPath(new URL('./utcp.proto', import.meta.url));

export async function startGrpcServer(): Promise<{ port: number; close(): Promise<void> }> {
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, defaults: true });
  const { grpcpb } = grpc.loadPackageDefinition(definition) as unknown as {
    grpcpb: { UTCPService: grpc.ServiceClientConstructor };
  };
  const server = new grpc.Server();
  server.addService(grpcpb.UTCPService.service, {
    GetManual(_call: grpc.ServerUnaryCall<object, object>, callback: grpc.sendUnaryData<object>) {
      callback(null, {
        version: '1.0.1',
        tools: [
          { name: 'add', description: 'Add two numbers' },
          { name: 'divide', description: 'Divide a by b' },
          { name: 'countdown', description: 'Count down from a number (streams)' },
        ],
      });
    },
    CallTool(call: grpc.ServerUnaryCall<CallRequest, object>, callback: grpc.sendUnaryData<object>) {
      const { a = 0, b = 0 } = JSON.parse(call.request.args_json || '{}') as Record<string, number>;
      if (call.request.tool === 'add') return callback(null, { result_json: JSON.stringify(a + b) });
      if (call.request.tool === 'divide') {
        if (b === 0) return callback({ code: grpc.status.INVALID_ARGUMENT, details: 'division by zero' });
        return callback(null, { result_json: JSON.stringify(a / b) });
      }
      callback({ code: grpc.status.NOT_FOUND, details: `unknown tool ${call.request.tool}` });
    },
    CallToolStream(call: grpc.ServerWritableStream<CallRequest, object>) {
      if (call.request.tool !== 'countdown') {
        return call.emit('error', { code: grpc.status.NOT_FOUND, details: `${call.request.tool} does not stream` });
      }
      const { from = 0 } = JSON.parse(call.request.args_json || '{}') as Record<string, number>;
      for (let n = from; n >= 0; n--) call.write({ result_json: JSON.stringify(n) });
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    port,
    close: async () => server.forceShutdown(),
  };
}
