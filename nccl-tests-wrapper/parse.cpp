#include "nccl-tests-wrapper/parse.h"

#include <cstdlib>
#include <regex>
#include <sstream>

namespace railyard::validate {
namespace {

using nlohmann::json;

std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

std::optional<double> number(const std::string& t) {
  if (t == "N/A") return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end) return std::nullopt;
  return v;
}

bool is_integer(const std::string& t) {
  return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
}

// The column layout, from the header line "#  size  count  type  redop  root  time  algbw ...".
struct Layout {
  bool has_root = false;
  bool legacy = false;             // `error` instead of `#wrong`
  std::vector<std::string> group;  // one placement's columns: time, algbw, busbw, #wrong, ...
  bool valid() const { return !group.empty(); }
};

Layout layout_of(const std::vector<std::string>& head) {
  Layout l;
  size_t i = 1;  // after "#"
  if (head.size() < 6 || head[1] != "size" || head[2] != "count") return l;
  i = 5;  // size count type redop
  if (i < head.size() && head[i] == "root") {
    l.has_root = true;
    ++i;
  }
  // The first group runs from time/cputime to the next time/cputime.
  if (i >= head.size() || (head[i] != "time" && head[i] != "cputime")) return l;
  for (size_t j = i; j < head.size(); ++j) {
    if (j > i && (head[j] == "time" || head[j] == "cputime")) break;
    l.group.push_back(head[j]);
    if (head[j] == "error") l.legacy = true;
  }
  return l;
}

Placement placement(const std::vector<std::string>& t, size_t at, const Layout& l) {
  Placement p;
  for (size_t k = 0; k < l.group.size() && at + k < t.size(); ++k) {
    const std::string& col = l.group[k];
    const auto v = number(t[at + k]);
    if (col == "time" || col == "cputime")
      p.time_us = v;
    else if (col == "algbw")
      p.algbw = v;
    else if (col == "busbw")
      p.busbw = v;
    else if (col == "#wrong" || col == "error")
      p.wrong = v;
  }
  return p;
}

std::string strip_prefix(const std::string& line) {
  // mpirun --tag-output: "[1,0]<stdout>:" ; also "[1,0]<stderr>:"
  static const std::regex tag(R"(^\[\d+,\d+\]<std(out|err)>:\s?)");
  return std::regex_replace(line, tag, "");
}

ParseResult parse_json(const std::string& text) {
  ParseResult r;
  r.format = "json";
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) {
    r.errors.push_back("JSON output is not a complete object (the run stopped while writing it)");
    return r;
  }
  auto placement_of = [](const json& o) -> std::optional<Placement> {
    if (!o.is_object()) return std::nullopt;
    Placement p;
    for (const char* k : {"time", "cpu_time"})
      if (o.contains(k) && o[k].is_number()) p.time_us = o[k].get<double>();
    if (o.contains("alg_bw") && o["alg_bw"].is_number()) p.algbw = o["alg_bw"].get<double>();
    if (o.contains("bus_bw") && o["bus_bw"].is_number()) p.busbw = o["bus_bw"].get<double>();
    if (o.contains("nwrong") && o["nwrong"].is_number()) p.wrong = o["nwrong"].get<double>();
    return p;
  };
  for (const auto& row : j.value("results", json::array())) {
    if (!row.is_object()) continue;
    Row out;
    out.size = row.value("size", int64_t{0});
    out.count = row.value("count", int64_t{0});
    out.type = row.value("type", "");
    out.redop = row.value("redop", "");
    if (row.contains("root")) {
      if (row["root"].is_number_integer())
        out.root = row["root"].get<int>();
      else if (row["root"].is_string())
        out.root = std::atoi(row["root"].get<std::string>().c_str());
    }
    out.out_of_place = placement_of(row.value("out_of_place", json()));
    out.in_place = placement_of(row.value("in_place", json()));
    r.rows.push_back(std::move(out));
  }
  if (j.contains("out_of_bounds") && j["out_of_bounds"].is_object())
    r.out_of_bounds = j["out_of_bounds"].value("count", int64_t{0});
  if (j.contains("average_bus_bandwidth") && j["average_bus_bandwidth"].is_object() &&
      j["average_bus_bandwidth"].contains("bandwidth"))
    r.avg_busbw = j["average_bus_bandwidth"]["bandwidth"].get<double>();
  for (const auto& e : j.value("errors", json::array()))
    if (e.is_string()) r.errors.push_back(e.get<std::string>());
  r.complete = r.avg_busbw.has_value();
  if (!r.complete) r.errors.push_back("no results summary: the run did not finish");
  return r;
}

}  // namespace

ParseResult parse_nccl_tests(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_json(text);

  ParseResult r;
  r.format = "2021";
  Layout layout;
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string line = strip_prefix(raw);
    const auto t = tokens(line);
    if (t.empty()) continue;
    if (line.find("NCCL INFO") != std::string::npos || line.find("NCCL WARN") != std::string::npos)
      continue;
    if (t[0] == "#") {
      static const std::regex version(R"(#\s*nccl-tests version\s+(\S+))");
      static const std::regex starting(R"(#\s*Collective test starting:\s*(\S+))");
      std::smatch m;
      if (std::regex_search(line, m, version)) {
        r.version = m[1];
        r.format = "2025";
      } else if (std::regex_search(line, m, starting)) {
        r.collective = m[1];
        r.format = "2025";
      } else if (t.size() > 2 && t[1] == "size" && t[2] == "count") {
        layout = layout_of(t);
        if (layout.legacy) r.format = "legacy";
      } else if (line.find("Out of bounds values") != std::string::npos) {
        const size_t colon = line.find(':');
        if (colon != std::string::npos) {
          const auto v = tokens(line.substr(colon + 1));
          if (!v.empty() && is_integer(v[0])) r.out_of_bounds = std::stoll(v[0]);
        }
      } else if (line.find("Avg bus bandwidth") != std::string::npos) {
        const size_t colon = line.find(':');
        if (colon != std::string::npos) {
          const auto v = tokens(line.substr(colon + 1));
          if (!v.empty()) r.avg_busbw = number(v[0]);
        }
        r.complete = true;
      } else if (t.size() > 1 && t[1] == "error:") {
        r.errors.push_back(line.substr(line.find("error:") + 7));
      }
      continue;
    }
    if (line.find("failure") != std::string::npos || line.find("error") != std::string::npos ||
        line.find("Error") != std::string::npos) {
      r.errors.push_back(line);  // "host: Test NCCL failure common.cu:954 'unhandled system error'"
      continue;
    }
    if (!layout.valid() || !is_integer(t[0])) continue;
    const size_t lead = layout.has_root ? 5 : 4;
    if (t.size() < lead + layout.group.size() || !is_integer(t[1])) continue;
    Row row;
    row.size = std::stoll(t[0]);
    row.count = std::stoll(t[1]);
    row.type = t[2];
    row.redop = t[3];
    if (layout.has_root) row.root = std::atoi(t[4].c_str());
    if (t.size() >= lead + 2 * layout.group.size()) {
      row.out_of_place = placement(t, lead, layout);
      row.in_place = placement(t, lead + layout.group.size(), layout);
    } else {
      row.in_place = placement(t, lead, layout);  // out-of-place left blank (trace replay)
    }
    r.rows.push_back(std::move(row));
  }
  if (!layout.valid())
    r.errors.push_back("no nccl-tests results header found");
  else if (!r.complete)
    r.errors.push_back("output ends before the summary: the run crashed or was killed");
  return r;
}

json to_json(const ParseResult& r) {
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  auto place = [&](const std::optional<Placement>& p) -> json {
    if (!p) return nullptr;
    return {{"time_us", opt(p->time_us)},
            {"algbw", opt(p->algbw)},
            {"busbw", opt(p->busbw)},
            {"wrong", opt(p->wrong)}};
  };
  json rows = json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"size", row.size},
                    {"count", row.count},
                    {"type", row.type},
                    {"redop", row.redop},
                    {"root", row.root ? json(*row.root) : json(nullptr)},
                    {"out_of_place", place(row.out_of_place)},
                    {"in_place", place(row.in_place)}});
  return {{"format", r.format},
          {"version", r.version},
          {"collective", r.collective},
          {"rows", rows},
          {"avg_busbw", opt(r.avg_busbw)},
          {"out_of_bounds", r.out_of_bounds ? json(*r.out_of_bounds) : json(nullptr)},
          {"errors", r.errors},
          {"complete", r.complete}};
}

}  // namespace railyard::validate
