// The validation's findings file, as written by railyard-validate and read by the device plugin:
// what one writes the other reads back, and what is not the format is refused by name.
#include <catch2/catch.hpp>

#include "common/rail_findings.h"

using railyard::parse_rail_findings;
using railyard::RailFindings;

TEST_CASE("rail findings: written and read back", "[common]") {
  const RailFindings f{"gpu-7", "2026-12-07T18:00:00Z", "fail", {{5, "slow: busbw 2 GB/s"}}};
  const RailFindings back = parse_rail_findings(railyard::rail_findings_json(f));
  CHECK(back.node == "gpu-7");
  CHECK(back.validated_at == "2026-12-07T18:00:00Z");
  CHECK(back.verdict == "fail");
  CHECK(back.failed == f.failed);
  CHECK(parse_rail_findings(R"({"verdict": "pass"})").failed.empty());
}

TEST_CASE("rail findings: what is not the format is refused by name", "[common]") {
  auto refused = [](const std::string& text, const std::string& why) {
    try {
      parse_rail_findings(text);
      FAIL("accepted " << text);
    } catch (const std::runtime_error& e) {
      CHECK_THAT(e.what(), Catch::Contains(why));
    }
  };
  refused("not json", "not a JSON object");
  refused("[1]", "not a JSON object");
  refused(R"({"node": 3})", "\"node\" is not a string");
  refused(R"({"failedRails": {}})", "\"failedRails\" is not a list");
  refused(R"({"failedRails": [{"rail": "5"}]})", "no integer \"rail\"");
  refused(R"({"failedRails": [{"rail": 4096}]})", "rail 4096 is out of range");
  refused(R"({"failedRails": [{"rail": 1, "reason": 7}]})", "\"reason\" is not a string");
  refused(std::string(70000, ' '), "larger than");
  const auto long_reason = parse_rail_findings(R"({"failedRails": [{"rail": 1, "reason": ")" +
                                               std::string(1000, 'x') + "\"}]}");
  CHECK(long_reason.failed.at(1).size() == 300);
}
