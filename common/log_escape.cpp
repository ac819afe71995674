#include "common/log_escape.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

namespace railyard {

std::string escape_controls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

namespace {

// spdlog's pattern formatter over the escaped payload: the pattern's own newline stays the only
// one in a line.
class EscapingFormatter final : public spdlog::formatter {
 public:
  explicit EscapingFormatter(std::string pattern)
      : pattern_(std::move(pattern)),
        inner_(std::make_unique<spdlog::pattern_formatter>(pattern_)) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    const std::string escaped = escape_controls(payload);
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
    inner_->format(copy, dest);
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<EscapingFormatter>(pattern_);
  }

 private:
  std::string pattern_;
  std::unique_ptr<spdlog::pattern_formatter> inner_;
};

}  // namespace

void escape_log_messages(spdlog::logger& logger, const std::string& pattern) {
  logger.set_formatter(std::make_unique<EscapingFormatter>(pattern));
}

void escape_default_log_messages() {
  escape_log_messages(*spdlog::default_logger());
}

}  // namespace railyard
