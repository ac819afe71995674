// A validation report for people (a table naming each bad rail and why), for machines (JSON),
// for CI systems (JUnit XML), and for Kubernetes (a node patch: label railyard.io/validated and
// an annotation with the summary, for `kubectl patch node N --patch-file F`).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "nccl-tests-wrapper/run/validate.h"

namespace railyard::validate {

void print_report(const Report& r, std::ostream& out);
nlohmann::json report_json(const Report& r);
std::string junit_xml(const Report& r);
nlohmann::json node_patch(const Report& r);

}  // namespace railyard::validate
