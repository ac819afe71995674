// What a container gets for a set of pool devices: RDMA device nodes, GPU device nodes or CDI
// names, env for NCCL and for sriov-network-device-plugin's readers, and the Multus device-info
// files. Plain data here; server.cpp turns it into the kubelet's message.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "deviceplugin/config.h"
#include "deviceplugin/pools.h"
#include "topology/model/node.h"

namespace railyard::deviceplugin {

class AllocateError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct DeviceNode {
  std::string path;  // the same in the container as on the host
  std::string permissions = "rwm";
};

struct DevInfoFile {
  std::string name;     // "<resource, / -> ->-<device ID>-device.json"
  std::string content;  // network-attachment-definition device-info spec 1.1.0, type pci
};

struct ContainerAllocation {
  std::map<std::string, std::string> envs;
  std::vector<DeviceNode> devices;
  std::vector<std::string> cdi_devices;
  std::vector<DevInfoFile> devinfo;
};

// Throws AllocateError for an empty list, an ID the pool does not hold, or one named twice:
// a request is served whole or not at all.
ContainerAllocation build_allocation(const Pool& pool, const topology::Node& node,
                                     const Config& config, const std::vector<std::string>& ids);

// Writes the files atomically (temp file + rename), mode 0444 as Multus' own writer does.
// Throws std::runtime_error naming the file.
void write_devinfo(const std::filesystem::path& dir, const std::vector<DevInfoFile>& files);

nlohmann::json to_json(const ContainerAllocation& a);

}  // namespace railyard::deviceplugin
