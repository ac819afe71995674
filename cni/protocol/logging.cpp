#include "cni/protocol/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace railyard::cni {

void setup_logging(const nlohmann::json& config, const std::string& plugin) {
  std::string level = "info";
  if (config.contains("logLevel") && config["logLevel"].is_string()) level = config["logLevel"];
  std::shared_ptr<spdlog::logger> logger;
  spdlog::drop(plugin);  // called again once the config is known
  spdlog::drop(plugin + "-file");
  if (config.contains("logFile") && config["logFile"].is_string() &&
      !config["logFile"].get<std::string>().empty()) {
    try {
      logger = spdlog::basic_logger_mt(plugin + "-file", config["logFile"].get<std::string>());
    } catch (const spdlog::spdlog_ex& e) {
      logger = spdlog::stderr_logger_mt(plugin);
      logger->warn("cannot open logFile: {}; logging to stderr", e.what());
    }
  } else {
    logger = spdlog::stderr_logger_mt(plugin);
  }
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ " + plugin + "[%P] %v");
  logger->set_level(level == "debug"                        ? spdlog::level::debug
                    : level == "warning" || level == "warn" ? spdlog::level::warn
                    : level == "error" || level == "panic"  ? spdlog::level::err
                                                            : spdlog::level::info);
  logger->flush_on(spdlog::level::debug);
  spdlog::set_default_logger(logger);
}

}  // namespace railyard::cni
