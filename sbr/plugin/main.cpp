// railyard-sbr: a chained CNI plugin that applies source-based routing to CNI_IFNAME from
// prevResult, then passes prevResult on (see config.h and ../README.md).
#include <spdlog/spdlog.h>

#include <iostream>

#include "cni-protocol/error.h"
#include "cni-protocol/netns.h"
#include "cni-protocol/plugin.h"
#include "net/netns.h"
#include "sbr/plugin/config.h"
#include "sbr/plugin/rail.h"

namespace cni = railyard::cni;
namespace net = railyard::net;
namespace sbr = railyard::sbr;
using cni::CniError;

namespace {

sbr::PluginConfig config_of(const cni::Request& req) {
  sbr::PluginConfig cfg = sbr::PluginConfig::parse(req.config);
  if (!cfg.table && !cfg.rail && !cfg.device_id.empty())
    cfg.rail = sbr::rail_of_device(cfg.device_id);
  return cfg;
}

// Table and priority for DEL and CHECK: from the configuration, or from the rule ADD made.
std::optional<std::pair<int, int>> existing_table(const sbr::PluginConfig& cfg,
                                                  const sbr::Plan& plan) {
  if (auto fixed = cfg.fixed_table()) return fixed;
  for (const auto& a : plan.addresses)
    if (auto rule = sbr::rule_for_source(a.address))
      return std::make_pair(rule->table, rule->priority);
  return std::nullopt;
}

nlohmann::json cmd_add(const cni::Request& req) {
  const sbr::PluginConfig cfg = config_of(req);
  if (!req.prev_result)
    throw CniError(cni::kInvalidConfig, "railyard-sbr must be chained: no prevResult");
  sbr::Plan plan = sbr::plan_from_result(*req.prev_result, req.env.ifname, cfg);
  cni::require_netns(req.env.netns);
  const cni::NetnsLock lock(req.env.netns);
  net::in_netns(req.env.netns, [&] {
    // Without a fixed table, a repeated ADD finds the table its rule already points to.
    const auto table = existing_table(cfg, plan);
    plan.table = table ? table->first : sbr::find_free_table(cfg.table_base);
    plan.priority = table ? table->second : cfg.priority_for(plan.table);
    try {
      sbr::apply(plan);
    } catch (const sbr::SbrError& e) {
      throw CniError(cni::kInvalidConfig,
                     std::string("source-based routing for ") + plan.ifname + ": " + e.what());
    }
  });
  spdlog::info("ADD {}: table {} priority {}, {} address(es)", plan.ifname, plan.table,
               plan.priority, plan.addresses.size());
  nlohmann::json out = req.config["prevResult"];
  out["cniVersion"] = req.version;
  return out;
}

void cmd_del(const cni::Request& req) {
  const sbr::PluginConfig cfg = config_of(req);
  if (req.env.netns.empty()) return;  // nothing left to clean: the namespace took it all
  try {
    net::check_netns_path(req.env.netns);
  } catch (const net::NetnsError& e) {
    // Gone, or something else left at its path (the reference sbr's lock creates an empty file):
    // either way no namespace holds anything of ours.
    spdlog::info("DEL {}: {}; nothing to remove", req.env.ifname, e.what());
    return;
  }
  if (!req.prev_result) {
    spdlog::info("DEL {}: no prevResult, nothing known to remove", req.env.ifname);
    return;
  }
  sbr::Plan plan;
  try {
    plan = sbr::plan_from_result(*req.prev_result, req.env.ifname, cfg);
  } catch (const CniError& e) {
    spdlog::info("DEL {}: {}; nothing to remove", req.env.ifname, e.what());
    return;
  }
  const cni::NetnsLock lock(req.env.netns);
  net::in_netns(req.env.netns, [&] {
    const auto table = existing_table(cfg, plan);
    if (!table) return;  // no rule of ours: already removed
    plan.table = table->first;
    plan.priority = table->second;
    sbr::remove(plan);
  });
}

void cmd_check(const cni::Request& req) {
  const sbr::PluginConfig cfg = config_of(req);
  if (!req.prev_result) throw CniError(cni::kInvalidConfig, "CHECK needs prevResult");
  sbr::Plan plan = sbr::plan_from_result(*req.prev_result, req.env.ifname, cfg);
  cni::require_netns(req.env.netns);
  std::vector<std::string> diffs;
  net::in_netns(req.env.netns, [&] {
    const auto table = existing_table(cfg, plan);
    if (!table) {
      diffs.push_back("no source rule for " + plan.addresses.front().address.to_string());
      return;
    }
    plan.table = table->first;
    plan.priority = table->second;
    diffs = sbr::check(plan);
  });
  if (diffs.empty()) return;
  std::string msg = "source-based routing for " + plan.ifname + " differs: ";
  for (size_t i = 0; i < diffs.size(); ++i) msg += (i ? "; " : "") + diffs[i];
  throw CniError(cni::kCheckFailed, msg);
}

}  // namespace

int main() {
  cni::Handlers handlers;
  handlers.add = cmd_add;
  handlers.del = cmd_del;
  handlers.check = cmd_check;
  return cni::plugin_main("railyard-sbr", handlers, std::cin, std::cout, cni::process_getenv());
}
