// `--apply`: a judgement becomes the cluster's state. Each failed rail's devices (as this node's
// railyard.io ResourceSlices publish them) get a DeviceTaintRule of their own, with the taint key
// railyard.io/validation and the evidence; the Node gets the label railyard.io/validated, the time
// and the reason, and the bring-up taint railyard.io/unvalidated:NoSchedule while something no
// rail explains fails (a pass removes it). Only objects labelled as railyard-validate's are ever
// changed or deleted, and a request the API server refuses undoes what this run did.
#pragma once

#include <string>
#include <vector>

#include "kube/api_client.h"
#include "kube/railyard_names.h"
#include "nccl-tests-wrapper/apply/judgement.h"

namespace railyard::validate {

using kube::kUnvalidatedTaint;
using kube::kValidatedLabel;
using kube::kValidationTaint;
inline constexpr const char* kManagedBy = "railyard-validate";
inline constexpr const char* kDeviceTaintRulesPath =
    "/apis/resource.k8s.io/v1beta2/devicetaintrules";

struct ApplyOptions {
  std::string now;                    // RFC 3339: railyard.io/validated-at
  std::string effect = "NoSchedule";  // the rules' taint effect: NoSchedule or NoExecute
};

struct ApplyResult {
  bool ok = true;
  long status = 0;    // the refusing answer's HTTP status (403, 409, 5xx), 0 for a transport error
  std::string error;  // the request, the object and the API server's message
  std::vector<std::string> actions;  // what changed: "created DeviceTaintRule ..."
  std::vector<std::string> notes;    // what did not need to, or could not be expressed
};

// The rule's name for one device of one node: a DNS subdomain, unique per node and device.
std::string rule_name(const std::string& node, const std::string& device);

ApplyResult apply_judgement(kube::ApiClient& api, const NodeJudgement& judgement,
                            const ApplyOptions& options);

}  // namespace railyard::validate
