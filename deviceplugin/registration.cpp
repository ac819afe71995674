#include "deviceplugin/registration.h"

#include <grpcpp/grpcpp.h>

#include "deviceplugin/api/deviceplugin.grpc.pb.h"

namespace railyard::deviceplugin {

std::string register_resource(const std::filesystem::path& kubelet_socket,
                              const std::string& endpoint, const std::string& resource,
                              std::chrono::milliseconds timeout) {
  // A fresh channel with a subchannel of its own: gRPC shares subchannels between channels to
  // the same target by default, so a new channel could inherit one still in reconnect backoff
  // from the kubelet that just went away (seconds, growing each time). Short backoff, and
  // wait_for_ready below: kubelet.sock appears at bind(), a moment before the kubelet listens.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  auto channel = grpc::CreateCustomChannel("unix:" + kubelet_socket.string(),
                                           grpc::InsecureChannelCredentials(), args);
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest req;
  req.set_version(kApiVersion);
  req.set_endpoint(endpoint);
  req.set_resource_name(resource);
  req.mutable_options()->set_get_preferred_allocation_available(true);
  v1beta1::Empty resp;
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(true);
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  const grpc::Status st = stub->Register(&ctx, req, &resp);
  if (st.ok()) return "";
  return "registering " + resource + " with " + kubelet_socket.string() + ": " +
         st.error_message() + " (gRPC code " + std::to_string(static_cast<int>(st.error_code())) +
         ")";
}

}  // namespace railyard::deviceplugin
