// A line plot as an SVG document: busbw per message size, one line per rail and one for the
// whole allreduce, log-scale sizes ("8 B" ... "1 GiB"); or any series over a linear x axis. Written
// by hand: one picture, no plotting library in the image. Browsers, GitHub and most viewers show
// it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace railyard::rdma {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (size in bytes, GB/s), sizes ascending
};

// The x axis: message sizes on a log scale (the default), or a linear one (time in seconds).
struct Axes {
  bool log_size_x = true;
  std::string x_label = "message size";
  std::string y_label = "busbw (GB/s)";
};

std::string svg_plot(const std::string& title, const std::vector<Series>& series,
                     const Axes& axes = {});

// "8 B", "64 KiB", "16 MiB": the x axis' labels.
std::string size_label(double bytes);

}  // namespace railyard::rdma
