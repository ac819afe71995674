// Reads nccl-tests output (all_reduce_perf and friends) of every generation:
//   2017       ("bytes N type op": times in ms, read as us; the max error in `res`)
//   legacy     (an `error` column with the max error, no `root`, no Group in device lines)
//   2021-2025  (`root`, `#wrong`)
//   2025+      ("# nccl-tests version", "Collective test starting/concluded", optional #bitdiff,
//               per-iteration and timestamp columns)
//   -J JSON    (the file nccl-tests writes with -J; one cut short keeps its complete rows)
// Columns are found from the header line, not from fixed widths. `N/A` is "not measured";
// numbers may be in exponent form (nccl-tests switches to %e when a value outgrows its column).
// Lines may carry the prefixes of mpirun --tag-output, srun -l, MPICH -prepend-rank and kubectl
// logs --prefix/--timestamps. NCCL INFO/WARN lines may be interleaved, even inside a row
// (nccl-tests prints a row in several calls): the row is put back together, or, when that cannot be
// done, the run is not complete and an error names the line. A run that crashed has no footer: that
// is reported, with what rows there were.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace railyard::validate {

struct Placement {
  std::optional<double> time_us, algbw, busbw;
  std::optional<double> wrong;  // #wrong elements; legacy output: its `error` column; null: N/A
};

struct Row {
  int64_t size = 0, count = 0;
  std::string type, redop;
  std::optional<int> root;  // null when the output has no root column
  std::optional<Placement> out_of_place, in_place;
};

struct ParseResult {
  std::string format;   // "2017", "legacy", "2021", "2025", "json"
  std::string version;  // nccl-tests version when printed
  std::string collective;
  std::vector<Row> rows;
  std::optional<double> avg_busbw;
  std::optional<int64_t> out_of_bounds;
  std::vector<std::string> errors;
  bool complete = false;  // the footer was there, and no row was lost
};

// Never throws on odd text: what cannot be read lands in `errors`.
ParseResult parse_nccl_tests(const std::string& text);
nlohmann::json to_json(const ParseResult& r);

}  // namespace railyard::validate
