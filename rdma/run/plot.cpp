#include "rdma/run/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/xml.h"

namespace railyard::rdma {
namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// An axis label: as many decimals as the step needs (0.25, not 0.2), none for whole numbers.
std::string label(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", std::abs(v) < 1e-12 ? 0.0 : v);
  return b;
}

// A round step for about `ticks` divisions of [0, top].
double nice_step(double top, int ticks) {
  const double raw = top / ticks, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

}  // namespace

std::string size_label(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char b[32];
  std::snprintf(b, sizeof b, bytes == std::floor(bytes) ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return b;
}

std::string svg_plot(const std::string& title, const std::vector<Series>& series,
                     const Axes& axes) {
  const double W = 800, H = 480, left = 70, right = 180, top = 40, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  const bool logx = axes.log_size_x;
  // On the log axis x is log2(bytes) and only positive sizes plot; on the linear one, x itself.
  auto fx = [&](double x) { return logx ? std::log2(x) : x; };
  auto plotted = [&](double x) { return !logx || x > 0; };
  double xmin = 0, xmax = 0, ymax = 0;
  bool any = false;
  for (const auto& s : series)
    for (const auto& [x, y] : s.points) {
      if (!plotted(x)) continue;
      const double lx = fx(x);
      xmin = any ? std::min(xmin, lx) : lx;
      xmax = any ? std::max(xmax, lx) : lx;
      ymax = std::max(ymax, y);
      any = true;
    }
  if (!any || xmax == xmin) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1;
  const double ystep = nice_step(ymax, 5);
  ymax = std::ceil(ymax / ystep) * ystep;
  if (!logx) xmin = std::min(xmin, 0.0);
  auto X = [&](double x) { return left + (fx(x) - xmin) / (xmax - xmin) * pw; };
  auto Y = [&](double v) { return top + ph - v / ymax * ph; };

  static const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" +
                  num(H) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text x=\"" + num(W / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" +
       xml_escape(title) + "</text>\n";
  for (double v = 0; v <= ymax + ystep / 2; v += ystep) {  // horizontal grid and y labels
    o += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(Y(v)) +
         "\" y2=\"" + num(Y(v)) + "\" stroke=\"#ddd\"/>\n";
    o += "<text x=\"" + num(left - 6) + "\" y=\"" + num(Y(v) + 4) + "\" text-anchor=\"end\">" +
         label(v) + "</text>\n";
  }
  auto xtick = [&](double x, const std::string& text) {
    o += "<line x1=\"" + num(X(x)) + "\" x2=\"" + num(X(x)) + "\" y1=\"" + num(top) + "\" y2=\"" +
         num(top + ph) + "\" stroke=\"#eee\"/>\n";
    o += "<text x=\"" + num(X(x)) + "\" y=\"" + num(top + ph + 18) + "\" text-anchor=\"middle\">" +
         text + "</text>\n";
  };
  if (logx) {
    const int xstep = std::max(1, static_cast<int>(std::ceil((xmax - xmin) / 10)));
    for (int e = static_cast<int>(std::ceil(xmin)); e <= static_cast<int>(xmax); e += xstep)
      xtick(std::pow(2.0, e), size_label(std::pow(2.0, e)));
  } else {
    const double step = nice_step(xmax - xmin, 8);
    for (double x = std::ceil(xmin / step) * step; x <= xmax + step / 1e6; x += step)
      xtick(x, label(x));
  }
  o += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" +
       num(ph) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  o += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(H - 15) + "\" text-anchor=\"middle\">" +
       xml_escape(axes.x_label) + "</text>\n";
  o += "<text transform=\"translate(18," + num(top + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(axes.y_label) + "</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const char* c = colours[i % 10];
    std::string pts;
    for (const auto& [x, y] : series[i].points)
      if (plotted(x)) pts += num(X(x)) + "," + num(Y(y)) + " ";
    o += "<polyline fill=\"none\" stroke=\"" + std::string(c) + "\" stroke-width=\"2\" points=\"" +
         pts + "\"/>\n";
    for (const auto& [x, y] : series[i].points)
      if (plotted(x))
        o += "<circle cx=\"" + num(X(x)) + "\" cy=\"" + num(Y(y)) + "\" r=\"2.5\" fill=\"" + c +
             "\"><title>" + xml_escape(series[i].name) + ": " + (logx ? size_label(x) : label(x)) +
             ", " + num(y) + " GB/s</title></circle>\n";
    const double ly = top + 10 + 20 * static_cast<double>(i);
    o += "<line x1=\"" + num(left + pw + 12) + "\" x2=\"" + num(left + pw + 32) + "\" y1=\"" +
         num(ly) + "\" y2=\"" + num(ly) + "\" stroke=\"" + c + "\" stroke-width=\"2\"/>\n";
    o += "<text x=\"" + num(left + pw + 38) + "\" y=\"" + num(ly + 4) + "\">" +
         xml_escape(series[i].name) + "</text>\n";
  }
  return o + "</svg>\n";
}

}  // namespace railyard::rdma
