// The SVG plot (rdma/run/plot.h): well-formed, one line per series, labels escaped.
#include <catch2/catch.hpp>

#include "rdma/run/plot.h"

using namespace railyard::rdma;

namespace {
size_t occurrences(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("size labels", "[rdma][plot]") {
  CHECK(size_label(8) == "8 B");
  CHECK(size_label(65536) == "64 KiB");
  CHECK(size_label(16.0 * 1024 * 1024) == "16 MiB");
  CHECK(size_label(1536) == "1.5 KiB");
}

TEST_CASE("an SVG plot has a line and a legend entry per series", "[rdma][plot]") {
  const std::string svg =
      svg_plot("busbw <tcp>", {{"allreduce", {{1024, 0.5}, {1 << 20, 1.5}, {64 << 20, 1.7}}},
                               {"rail 0 & 1", {{1024, 0.2}, {1 << 20, 0.9}, {64 << 20, 1.1}}}});
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(occurrences(svg, "<polyline") == 2);
  CHECK(occurrences(svg, "<circle") == 6);
  CHECK_THAT(svg, Catch::Contains("busbw &lt;tcp&gt;"));
  CHECK_THAT(svg, Catch::Contains("rail 0 &amp; 1"));
  CHECK_THAT(svg, Catch::Contains(">64 MiB<"));  // the x axis reaches the largest size
  CHECK_THAT(svg, Catch::Contains("1 MiB, 1.5 GB/s"));
  // The y axis steps by 0.25 up to 1.25: labelled as such, not rounded to one decimal.
  const std::string quarters = svg_plot("q", {{"x", {{1024, 0.1}, {2048, 1.2}}}});
  CHECK_THAT(quarters, Catch::Contains(">0.25</text>"));
  CHECK_THAT(quarters, Catch::Contains(">1.25</text>"));
  CHECK_THAT(quarters, Catch::Contains(">0</text>"));
  // Nothing to plot still makes a valid, empty chart.
  CHECK(svg_plot("empty", {}).find("</svg>") != std::string::npos);
}
