#include "cni-protocol/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "cni-protocol/error.h"
#include "common/log_escape.h"

namespace railyard::cni {
namespace {

void install(std::shared_ptr<spdlog::logger> logger, const std::string& plugin,
             const std::string& level) {
  escape_log_messages(*logger, "%Y-%m-%dT%H:%M:%S.%e %^%l%$ " + plugin + "[%P] %v");
  logger->set_level(level == "debug"                        ? spdlog::level::debug
                    : level == "warning" || level == "warn" ? spdlog::level::warn
                    : level == "error" || level == "panic"  ? spdlog::level::err
                                                            : spdlog::level::info);
  logger->flush_on(spdlog::level::debug);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace

void setup_stderr_logging(const std::string& plugin) {
  spdlog::drop(plugin);
  install(spdlog::stderr_logger_mt(plugin), plugin, "info");
}

void setup_logging(const nlohmann::json& config, const std::string& plugin,
                   const NodePolicy& policy, bool strict) {
  std::string level = "info";
  if (config.contains("logLevel") && config["logLevel"].is_string()) level = config["logLevel"];
  std::string file;
  std::string refused;
  if (config.contains("logFile") && config["logFile"].is_string() &&
      !config["logFile"].get<std::string>().empty()) {
    try {
      file = policy.log_file(config["logFile"].get<std::string>());
    } catch (const CniError& e) {
      if (strict) throw;
      refused = e.what();
    }
  }
  spdlog::drop(plugin);  // called again once the config is known
  spdlog::drop(plugin + "-file");
  std::shared_ptr<spdlog::logger> logger;
  std::string failed;
  if (!file.empty()) {
    try {
      logger = spdlog::basic_logger_mt(plugin + "-file", file);
    } catch (const spdlog::spdlog_ex& e) {
      failed = e.what();
    }
  }
  if (!logger) logger = spdlog::stderr_logger_mt(plugin);
  install(logger, plugin, level);
  if (!refused.empty()) spdlog::warn("{}; logging to stderr", refused);
  if (!failed.empty()) spdlog::warn("cannot open logFile: {}; logging to stderr", failed);
}

}  // namespace railyard::cni
