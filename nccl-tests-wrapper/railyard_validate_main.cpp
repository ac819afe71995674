// railyard-validate: is every rail of this node fit for jobs? `run` checks and benchmarks the
// node and gives a verdict (exit 0 pass, 1 fail, 2 could not run); `parse` reads nccl-tests
// output of any generation.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "nccl-tests-wrapper/parse.h"
#include "nccl-tests-wrapper/report.h"

namespace v = railyard::validate;

namespace {

int cmd_parse(const std::string& file) {
  std::stringstream ss;
  if (file == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "railyard-validate parse: cannot read " << file << "\n";
      return 2;
    }
    ss << in.rdbuf();
  }
  const auto result = v::parse_nccl_tests(ss.str());
  std::cout << v::to_json(result).dump(2) << "\n";
  return result.rows.empty() ? 2 : 0;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) std::cerr << "railyard-validate: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"railyard-validate: is every rail of this node fit for jobs?"};
  app.require_subcommand(1);
  std::string file, config_path, report_path, junit_path, patch_path, sysfs_root, rails,
      timeline_path;
  auto* parse = app.add_subcommand(
      "parse", "Read nccl-tests output (any generation, or -J JSON) and print JSON");
  parse->add_option("FILE", file, "nccl-tests output; - for stdin")->required();
  auto* check = app.add_subcommand(
      "config", "Read a validation config and name its first error; exit 0 when it is valid");
  check->add_option("FILE", config_path, "validation config (JSON)")->required();
  auto* run = app.add_subcommand(
      "run", "Check the node and benchmark its rails; exit 0 pass, 1 fail, 2 could not run");
  run->add_option("--config", config_path, "validation config (JSON)")->required();
  run->add_option("--report", report_path, "write the report as JSON");
  run->add_option("--junit", junit_path, "write the report as JUnit XML");
  run->add_option("--node-patch", patch_path,
                  "write a kubectl node patch (label railyard.io/validated)");
  run->add_option("--timeline", timeline_path,
                  "write an SVG plot of each rail's throughput during the run across all rails");
  run->add_option("--sysfs-root", sysfs_root, "overrides the config's sysfsRoot");
  run->add_option("--rails", rails, "overrides the config's railsFile");
  CLI11_PARSE(app, argc, argv);
  if (*parse) return cmd_parse(file);
  if (*check) {
    try {
      v::Config::load(config_path);
    } catch (const v::ConfigError& e) {
      std::cerr << "railyard-validate config: " << e.what() << "\n";
      return 2;
    }
    std::cout << config_path << ": ok\n";
    return 0;
  }

  v::Config cfg;
  try {
    cfg = v::Config::load(config_path);
  } catch (const v::ConfigError& e) {
    std::cerr << "railyard-validate run: " << e.what() << "\n";
    return 2;
  }
  if (!sysfs_root.empty()) cfg.sysfs_root = sysfs_root;
  if (!rails.empty()) cfg.rails_file = rails;
  const v::Report report = v::validate_node(cfg);
  v::print_report(report, std::cout);
  bool written = true;
  if (!report_path.empty())
    written &= write_file(report_path, v::report_json(report).dump(2) + "\n");
  if (!junit_path.empty()) written &= write_file(junit_path, v::junit_xml(report));
  if (!patch_path.empty()) written &= write_file(patch_path, v::node_patch(report).dump(2) + "\n");
  if (!timeline_path.empty())
    written &= write_file(timeline_path, v::timeline_svg(report.timeline));
  if (!written) return 2;
  return static_cast<int>(report.verdict);
}
