// A line plot as an SVG document: busbw per message size, one line per rail and one for the
// whole allreduce, log-scale sizes ("8 B" ... "1 GiB"). Written by hand: one picture, no plotting
// library in the image. Browsers, GitHub and most viewers show it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace railyard::rdma {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (size in bytes, GB/s), sizes ascending
};

std::string svg_plot(const std::string& title, const std::vector<Series>& series);

// "8 B", "64 KiB", "16 MiB": the x axis' labels.
std::string size_label(double bytes);

}  // namespace railyard::rdma
