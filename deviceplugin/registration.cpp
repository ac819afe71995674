#include "deviceplugin/registration.h"

#include <grpcpp/grpcpp.h>

#include "deviceplugin/api/deviceplugin.grpc.pb.h"

namespace railyard::deviceplugin {

std::string register_resource(const std::filesystem::path& kubelet_socket,
                              const std::string& endpoint, const std::string& resource,
                              std::chrono::milliseconds timeout) {
  auto channel =
      grpc::CreateChannel("unix:" + kubelet_socket.string(), grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest req;
  req.set_version(kApiVersion);
  req.set_endpoint(endpoint);
  req.set_resource_name(resource);
  req.mutable_options()->set_get_preferred_allocation_available(true);
  v1beta1::Empty resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  const grpc::Status st = stub->Register(&ctx, req, &resp);
  if (st.ok()) return "";
  return "registering " + resource + " with " + kubelet_socket.string() + ": " +
         st.error_message() + " (gRPC code " + std::to_string(static_cast<int>(st.error_code())) +
         ")";
}

}  // namespace railyard::deviceplugin
