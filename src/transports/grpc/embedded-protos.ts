/** Protocol definitions shipped inside the package (parsed with protobufjs, so no .proto file has to ship). */

/** The `grpcpb.UTCPService` protocol shared by go-utcp, rs-utcp and elixir-utcp (docs/design/transports.md#grpc). */
export const UTCP_SERVICE_PROTO = `syntax = "proto3";
package grpcpb;

message Empty {}
message Tool { string name = 1; string description = 2; }
message Manual { string version = 1; repeated Tool tools = 2; }
message ToolCallRequest { string tool = 1; string args_json = 2; }
message ToolCallResponse { string result_json = 1; }

service UTCPService {
  rpc GetManual(Empty) returns (Manual);
  rpc CallTool(ToolCallRequest) returns (ToolCallResponse);
  rpc CallToolStream(ToolCallRequest) returns (stream ToolCallResponse);
}
`;

export const UTCP_SERVICE_NAME = 'grpcpb.UTCPService';

/**
 * The parts of grpc/reflection/v1/reflection.proto this client uses; `grpc.reflection.v1alpha`
 * has the same messages under another package.
 */
export function reflectionProto(pkg: 'grpc.reflection.v1' | 'grpc.reflection.v1alpha'): string {
  return `syntax = "proto3";
package ${pkg};

service ServerReflection {
  rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse);
}
message ServerReflectionRequest {
  string host = 1;
  oneof message_request {
    string file_by_filename = 3;
    string file_containing_symbol = 4;
    ExtensionRequest file_containing_extension = 5;
    string all_extension_numbers_of_type = 6;
    string list_services = 7;
  }
}
message ExtensionRequest { string containing_type = 1; int32 extension_number = 2; }
message ServerReflectionResponse {
  string valid_host = 1;
  ServerReflectionRequest original_request = 2;
  oneof message_response {
    FileDescriptorResponse file_descriptor_response = 4;
    ExtensionNumberResponse all_extension_numbers_response = 5;
    ListServiceResponse list_services_response = 6;
    ErrorResponse error_response = 7;
  }
}
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ExtensionNumberResponse { string base_type_name = 1; repeated int32 extension_number = 2; }
message ListServiceResponse { repeated ServiceResponse service = 1; }
message ServiceResponse { string name = 1; }
message ErrorResponse { int32 error_code = 1; string error_message = 2; }
`;
}
