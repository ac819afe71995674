// libFuzzer target for everything railyard's CNI plugins parse from outside: the network config
// (railyard-cni, railyard-sbr), prevResult, the CNI_* environment, the rails file and the node
// policy. The first
// byte picks the parser; the rest is its input. A parser may reject input only with its own
// error type; anything else (a crash, another exception, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cni-protocol/env.h"
#include "cni-protocol/error.h"
#include "cni-protocol/result.h"
#include "cni/plugin/config.h"
#include "sbr/plugin/config.h"
#include "topology/model/rails.h"

using namespace railyard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 6) {
      case 0: {
        auto j = nlohmann::json::parse(input, nullptr, false);
        if (!j.is_discarded()) cni::NetConf::parse(j, cni::NodePolicy{});
        break;
      }
      case 1: {
        auto j = nlohmann::json::parse(input, nullptr, false);
        if (!j.is_discarded()) cni::to_json(cni::parse_result(j), "0.4.0");
        break;
      }
      case 2: {
        std::map<std::string, std::string> vars;
        size_t start = 0;
        while (start < input.size()) {
          size_t end = input.find('\n', start);
          if (end == std::string::npos) end = input.size();
          const std::string line = input.substr(start, end - start);
          if (auto eq = line.find('='); eq != std::string::npos)
            vars[line.substr(0, eq)] = line.substr(eq + 1);
          start = end + 1;
        }
        cni::parse_env([&](const std::string& k) -> std::optional<std::string> {
          auto it = vars.find(k);
          if (it == vars.end()) return std::nullopt;
          return it->second;
        });
        break;
      }
      case 3:
        topology::parse_rails_config(input, "fuzz");
        break;
      case 4: {
        auto j = nlohmann::json::parse(input, nullptr, false);
        if (!j.is_discarded()) sbr::PluginConfig::parse(j);
        break;
      }
      case 5:
        cni::NodePolicy::parse(input, "fuzz");
        break;
    }
  } catch (const cni::CniError&) {
  } catch (const topology::RailsError&) {
  }
  return 0;
}
