#include "nccl-tests-wrapper/checks/nccl_path.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "nccl-tests-wrapper/checks/check.h"

namespace railyard::validate {
namespace {

bool before_2_4(const std::optional<std::string>& version) {
  int major = 0, minor = 0;
  return version && std::sscanf(version->c_str(), "%d.%d", &major, &minor) == 2 &&
         (major < 2 || (major == 2 && minor < 4));
}

Finding judge(const std::string& subject, const NcclNetUse& use,
              const std::vector<std::string>& expected, const std::string& gpu_direct) {
  const char* check = "nccl-path";
  if (!use.any_info)
    return Finding::unknown_because(subject, check,
                                    "the benchmark printed no NCCL INFO lines (not NCCL, or "
                                    "NCCL_DEBUG is not INFO)");
  if (!use.network && use.channels.empty())
    return Finding::unknown_because(subject, check,
                                    before_2_4(use.version)
                                        ? "NCCL " + *use.version +
                                              " prints its network channels in a form this "
                                              "check does not read (it reads NCCL 2.4 and later)"
                                        : "NCCL set up no network channel (all ranks on this "
                                          "node?)");
  std::string wanted;
  for (const auto& e : expected) wanted += (wanted.empty() ? "" : ",") + e;
  for (const auto& c : use.channels)
    if (c.transport != "IB")
      return {subject, check, State::kFail,
              "NCCL used NET/" + c.transport + ", not NET/IB: \"" + c.line + "\""};
  if (use.network && *use.network != "IB")
    return {subject, check, State::kFail, "NCCL chose network " + *use.network + ", not IB"};
  std::set<std::string> used;
  int gdr = 0;
  for (const auto& c : use.channels) {
    const std::string dev = c.device >= 0 && static_cast<size_t>(c.device) < use.ib_devices.size()
                                ? use.ib_devices[static_cast<size_t>(c.device)]
                                : "NET/IB device " + std::to_string(c.device);
    const std::string hca = dev.substr(0, dev.find(':'));
    if (std::find(expected.begin(), expected.end(), hca) == expected.end())
      return {subject, check, State::kFail,
              "channel " + c.channel + " used " + dev + ", not " + wanted + ": \"" + c.line + "\""};
    used.insert(dev);
    gdr += c.gdr;
  }
  std::string devs;
  for (const auto& d : used) devs += (devs.empty() ? "" : ",") + d;
  const size_t n = use.channels.size();
  const std::string what = "NET/IB over " + (devs.empty() ? wanted : devs) + " on " +
                           std::to_string(n) + " channel(s), GDRDMA on " + std::to_string(gdr);
  if (gpu_direct != "off" && static_cast<size_t>(gdr) < n) {
    return Finding{subject, check, gpu_direct == "warn" ? State::kWarn : State::kFail,
                   what + ": GPUDirect RDMA not used (nvidia_peermem or dma-buf missing?)"};
  }
  return Finding::judged(subject, check, true, what);
}

}  // namespace

Finding judge_nccl_path(const std::string& subject, const NcclNetUse& use,
                        const std::vector<std::string>& expected, const std::string& gpu_direct) {
  Finding f = judge(subject, use, expected, gpu_direct);
  int gdr = 0;
  for (const auto& c : use.channels) gdr += c.gdr;
  f.evidence = {
      {"network", use.network ? nlohmann::json(*use.network) : nlohmann::json(nullptr)},
      {"nccl_version", use.version ? nlohmann::json(*use.version) : nlohmann::json(nullptr)},
      {"ib_devices", use.ib_devices},
      {"channels", use.channels.size()},
      {"gdr_channels", gdr}};
  return f;
}

namespace {

class NcclPathCheck : public NodeCheck {
 public:
  void after_runs(const NodeView& v, const RunsSeen& seen,
                  std::vector<Finding>& out) const override {
    for (const auto& run : seen.runs)
      if (!run.could_not_run)
        out.push_back(judge_nccl_path(run.name, run.nccl, run.rdma_devices, v.settings.gpu_direct)
                          .on_rail(run.rail));
  }
};

}  // namespace

const NodeCheck& nccl_path_check() {
  static const NcclPathCheck c;
  return c;
}

}  // namespace railyard::validate
