#include "nccl-tests-wrapper/nccl/parse.h"

#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <stdexcept>

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

// Digits only, and few enough to fit an int64_t: std::stoll on it cannot throw.
bool is_integer(const std::string& t) {
  return !t.empty() && t.size() <= 18 && t.find_first_not_of("0123456789") == std::string::npos;
}

// A root rank ("-1" for none; -J pads it: "    -1"); nullopt for anything that is not an int.
std::optional<int> small_int(const std::string& t) {
  const size_t first = t.find_first_not_of(' '), last = t.find_last_not_of(' ');
  if (first == std::string::npos) return std::nullopt;
  int v = 0;
  const char* end_of = t.data() + last + 1;
  const auto [end, ec] = std::from_chars(t.data() + first, end_of, v);
  if (ec != std::errc() || end != end_of) return std::nullopt;
  return v;
}

// Digits, but too many for any size or count nccl-tests prints.
bool is_oversized_integer(const std::string& t) {
  return t.size() > 18 && t.find_first_not_of("0123456789") == std::string::npos;
}

// A JSON member that must be an integer when present: its value, or nullopt when it is absent.
// Throws std::invalid_argument naming it when it is something else or out of int64_t's range.
std::optional<int64_t> json_int(const json& o, const char* key) {
  if (!o.contains(key) || o[key].is_null()) return std::nullopt;
  const json& v = o[key];
  if (v.is_number_integer() && (v.is_number_unsigned() ? v.get<uint64_t>() <= INT64_MAX : true))
    return v.get<int64_t>();
  throw std::invalid_argument(std::string("'") + key +
                              "' is not an integer in range: " + v.dump().substr(0, 40));
}

std::string json_string(const json& o, const char* key) {
  if (!o.contains(key) || o[key].is_null()) return "";
  if (!o[key].is_string())
    throw std::invalid_argument(std::string("'") + key +
                                "' is not a string: " + o[key].dump().substr(0, 40));
  return o[key].get<std::string>();
}

// The column layout, from the header line "#  size  count  type  redop  root  time  algbw ...".
// "# size count type redop ..." (2018 on) or "# bytes N type op ..." (2017-2019: time in ms,
// the max error in `res`).
bool is_results_header(const std::vector<std::string>& t) {
  return t.size() > 2 && t[0] == "#" &&
         ((t[1] == "size" && t[2] == "count") || (t[1] == "bytes" && t[2] == "N"));
}

struct Layout {
  bool has_root = false;
  bool legacy = false;             // `error` or `res` instead of `#wrong`
  bool oldest = false;             // "bytes N type op": times in ms
  std::vector<std::string> group;  // one placement's columns: time, algbw, busbw, #wrong, ...
  bool valid() const { return !group.empty(); }
};

Layout layout_of(const std::vector<std::string>& head) {
  Layout l;
  size_t i = 1;  // after "#"
  if (head.size() < 6 || !is_results_header(head)) return l;
  l.oldest = head[1] == "bytes";
  i = 5;  // size count type redop (bytes N type op)
  if (i < head.size() && head[i] == "root") {
    l.has_root = true;
    ++i;
  }
  // The first group runs from time/cputime to the next time/cputime.
  if (i >= head.size() || (head[i] != "time" && head[i] != "cputime")) return l;
  for (size_t j = i; j < head.size(); ++j) {
    if (j > i && (head[j] == "time" || head[j] == "cputime")) break;
    l.group.push_back(head[j]);
    if (head[j] == "error" || head[j] == "res") l.legacy = true;
  }
  return l;
}

Placement placement(const std::vector<std::string>& t, size_t at, const Layout& l) {
  Placement p;
  for (size_t k = 0; k < l.group.size() && at + k < t.size(); ++k) {
    const std::string& col = l.group[k];
    const auto v = number(t[at + k]);
    if (col == "time" || col == "cputime")
      p.time_us = v && l.oldest ? std::optional<double>(*v * 1000) : v;
    else if (col == "algbw")
      p.algbw = v;
    else if (col == "busbw")
      p.busbw = v;
    else if (col == "#wrong" || col == "error" || col == "res")
      p.wrong = v;
  }
  return p;
}

// What launchers and log collectors put before each line, in any combination and order:
//   mpirun --tag-output      "[1,0]<stdout>:"
//   kubectl logs --prefix    "[pod/validate-0-abc/bench] "
//   kubectl logs --timestamps "2026-12-03T13:14:12.123456789Z "
//   srun -l                  "0: " (right-aligned: " 3: ", "12: ")
//   MPICH -prepend-rank      "[0] "
std::string strip_prefix(const std::string& line) {
  static const std::regex prefix(
      R"(^(\[\d+,\d+\]<std(out|err)>:\s?|\[(pod|job|deployment|statefulset|daemonset)/[^\]\s]+\] |)"
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) |\s*\d+: |\[\d+\] ))");
  std::string out = line;
  for (int i = 0; i < 4; ++i) {
    std::smatch m;
    if (!std::regex_search(out, m, prefix)) break;
    out = m.suffix();
  }
  return out;
}

// Where an NCCL log line starts ("host:pid:tid [dev] NCCL INFO ..."), or npos. nccl-tests
// prints a row in several printf calls, so NCCL's threads can land one in the middle of a row.
// The row's last field and the host name touch ("-1node-a:..."), so a host name that starts with
// a letter is looked for first; then any, then the bare "NCCL INFO".
size_t nccl_line_at(const std::string& line) {
  if (line.find("NCCL ") == std::string::npos) return std::string::npos;
  static const std::regex patterns[] = {
      std::regex(R"([A-Za-z][\w.-]*:\d+:\d+ \[\d+\] NCCL (INFO|WARN|TRACE|ERROR|ABORT) )"),
      std::regex(R"(\S+:\d+:\d+ \[\d+\] NCCL (INFO|WARN|TRACE|ERROR|ABORT) )"),
      std::regex(R"(NCCL (INFO|WARN|TRACE|ERROR|ABORT) )")};
  for (const auto& re : patterns) {
    std::smatch m;
    if (std::regex_search(line, m, re)) return static_cast<size_t>(m.position(0));
  }
  return std::string::npos;
}

// The complete objects of the "results" array of a JSON file that was cut short, as an array.
json salvage_results(const std::string& text) {
  const size_t key = text.find("\"results\"");
  if (key == std::string::npos) return json::array();
  const size_t open = text.find('[', key);
  if (open == std::string::npos) return json::array();
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t last_end = std::string::npos;
  for (size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) break;  // the array closed: not truncated inside it
      if (depth == 1 && c == '}') last_end = i;
    }
  }
  if (last_end == std::string::npos) return json::array();
  json rows = json::parse(text.substr(open, last_end - open + 1) + "]", nullptr, false);
  return rows.is_array() ? rows : json::array();
}

ParseResult parse_json(const std::string& text) {
  ParseResult r;
  r.format = "json";
  json j = json::parse(text, nullptr, false);
  const bool cut_short = !j.is_object();
  if (cut_short) {
    j = json{{"results", salvage_results(text)}};
    r.errors.push_back("JSON output is cut short after " + std::to_string(j["results"].size()) +
                       " rows (the run stopped while writing it)");
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
  const json results =
      j.contains("results") && j["results"].is_array() ? j["results"] : json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const json& row = results[i];
    if (!row.is_object()) continue;
    Row out;
    try {
      out.size = json_int(row, "size").value_or(0);
      out.count = json_int(row, "count").value_or(0);
      out.type = json_string(row, "type");
      out.redop = json_string(row, "redop");
      if (row.contains("root") && row["root"].is_string()) {
        out.root = small_int(row["root"].get<std::string>());
      } else if (const auto root = json_int(row, "root");
                 root && *root >= INT32_MIN && *root <= INT32_MAX) {
        out.root = static_cast<int>(*root);
      }
    } catch (const std::invalid_argument& e) {
      r.errors.push_back("results[" + std::to_string(i) + "]: " + e.what());
      continue;
    }
    out.out_of_place = placement_of(row.value("out_of_place", json()));
    out.in_place = placement_of(row.value("in_place", json()));
    r.rows.push_back(std::move(out));
  }
  if (j.contains("out_of_bounds") && j["out_of_bounds"].is_object()) {
    try {
      r.out_of_bounds = json_int(j["out_of_bounds"], "count").value_or(0);
    } catch (const std::invalid_argument& e) {
      r.errors.push_back(std::string("out_of_bounds: ") + e.what());
    }
  }
  if (j.contains("average_bus_bandwidth") && j["average_bus_bandwidth"].is_object() &&
      j["average_bus_bandwidth"].contains("bandwidth") &&
      j["average_bus_bandwidth"]["bandwidth"].is_number())
    r.avg_busbw = j["average_bus_bandwidth"]["bandwidth"].get<double>();
  // A clean run writes "errors": [""]: an empty string is no error.
  if (j.contains("errors") && j["errors"].is_array())
    for (const auto& e : j["errors"])
      if (e.is_string() && !e.get<std::string>().empty()) r.errors.push_back(e.get<std::string>());
  r.complete = r.avg_busbw.has_value();
  if (!r.complete && !cut_short) r.errors.push_back("no results summary: the run did not finish");
  return r;
}

}  // namespace

namespace {

bool row_start(const std::vector<std::string>& t) {
  return !t.empty() && is_integer(t[0]) && (t.size() < 2 || is_integer(t[1]));
}

// A whole row in `t` (both placements, or the in-place one alone as trace replay prints), or
// nothing when the line is not one.
std::optional<Row> parse_row(const std::vector<std::string>& t, const Layout& layout) {
  const size_t lead = layout.has_root ? 5 : 4;
  if (!layout.valid() || !row_start(t) || t.size() < lead + layout.group.size())
    return std::nullopt;
  Row row;
  row.size = std::stoll(t[0]);
  row.count = std::stoll(t[1]);
  row.type = t[2];
  row.redop = t[3];
  if (layout.has_root) row.root = small_int(t[4]);
  if (t.size() >= lead + 2 * layout.group.size()) {
    row.out_of_place = placement(t, lead, layout);
    row.in_place = placement(t, lead + layout.group.size(), layout);
  } else {
    row.in_place = placement(t, lead, layout);  // out-of-place left blank (trace replay)
  }
  return row;
}

void header_line(const std::string& line, const std::vector<std::string>& t, ParseResult& r,
                 Layout& layout) {
  static const std::regex version(R"(#\s*nccl-tests version\s+(\S+))");
  static const std::regex starting(R"(#\s*Collective test starting:\s*(\S+))");
  std::smatch m;
  if (std::regex_search(line, m, version)) {
    r.version = m[1];
    r.format = "2025";
  } else if (std::regex_search(line, m, starting)) {
    r.collective = m[1];
    r.format = "2025";
  } else if (is_results_header(t)) {
    layout = layout_of(t);
    if (layout.oldest)
      r.format = "2017";
    else if (layout.legacy)
      r.format = "legacy";
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
}

}  // namespace

ParseResult parse_nccl_tests(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_json(text);

  ParseResult r;
  r.format = "2021";
  Layout layout;
  // The start of a row that other output cut off, waiting for its rest on the next line.
  std::string pending;
  int pending_line = 0, line_no = 0;
  bool lost = false;
  auto give_up_pending = [&] {
    if (pending.empty()) return;
    r.errors.push_back("line " + std::to_string(pending_line) +
                       ": a results row cut short by other output: '" +
                       pending.substr(pending.find_first_not_of(' ')) + "'");
    lost = true;
    pending.clear();
  };
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string line = strip_prefix(raw);
    if (const size_t at = nccl_line_at(line); at != std::string::npos) {
      // Text before the NCCL line is the start of a row when it looks like one.
      const std::string before = line.substr(0, at);
      if (layout.valid() && row_start(tokens(before))) {
        give_up_pending();
        pending = before;
        pending_line = line_no;
      }
      continue;
    }
    const auto t = tokens(line);
    if (t.empty()) continue;
    if (!pending.empty()) {
      // A continuation starts with a time or bandwidth, never with a row's size and count.
      if (!row_start(t)) {
        if (auto row = parse_row(tokens(pending + line), layout)) {
          r.rows.push_back(std::move(*row));
          pending.clear();
          continue;
        }
      }
      give_up_pending();
    }
    // The oldest versions print the footer without its '#'.
    if (t[0] == "#" || line.find("Avg bus bandwidth") != std::string::npos ||
        line.find("Out of bounds values") != std::string::npos) {
      header_line(line, t, r, layout);
      continue;
    }
    if (line.find("failure") != std::string::npos || line.find("error") != std::string::npos ||
        line.find("Error") != std::string::npos) {
      r.errors.push_back(line);  // "host: Test NCCL failure common.cu:954 'unhandled system error'"
      continue;
    }
    if (layout.valid() && is_oversized_integer(t[0])) {
      r.errors.push_back("line " + std::to_string(line_no) + ": a size out of range: '" +
                         line.substr(0, 60) + "'");
      continue;
    }
    if (!layout.valid() || !row_start(t)) continue;
    if (auto row = parse_row(t, layout)) {
      r.rows.push_back(std::move(*row));
    } else {
      pending = line;  // its rest may follow on the next line
      pending_line = line_no;
    }
  }
  give_up_pending();
  if (!layout.valid())
    r.errors.push_back("no nccl-tests results header found");
  else if (!r.complete)
    r.errors.push_back("output ends before the summary: the run crashed or was killed");
  if (lost) r.complete = false;
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
