// railyard-validate: node verdicts from nccl-tests / railyard-bench runs. `parse` is done; `run`
// (node checks, per-rail runs, thresholds, report) is not yet.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "nccl-tests-wrapper/parse.h"

int main(int argc, char** argv) {
  CLI::App app{"railyard-validate: is this node's every rail fit for jobs?"};
  app.require_subcommand(1);
  std::string file;
  auto* parse = app.add_subcommand(
      "parse", "Read nccl-tests output (any generation, or -J JSON) and print JSON");
  parse->add_option("FILE", file, "nccl-tests output; - for stdin")->required();
  auto* run = app.add_subcommand("run", "Check the node and its rails (not implemented yet)");
  std::string config;
  run->add_option("--config", config, "validation config");
  CLI11_PARSE(app, argc, argv);
  if (*run) {
    std::cerr << "railyard-validate run: not implemented yet\n";
    return 2;
  }
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
  const auto result = railyard::validate::parse_nccl_tests(ss.str());
  std::cout << railyard::validate::to_json(result).dump(2) << "\n";
  return result.rows.empty() ? 2 : 0;
}
