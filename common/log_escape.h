// Text from outside (NAD fields, peers' messages, the API server's answers) reaches our logs and
// reports. Every control character is written out as an escape (\n, \t, \xHH), so a value can
// never start a log line of its own, move the cursor or break a parser that reads the log.
#pragma once

#include <spdlog/logger.h>

#include <string>
#include <string_view>

namespace railyard {

// Bytes 0x00-0x1f and 0x7f escaped; everything else (UTF-8 and backslashes included) kept, so
// escaping twice changes nothing: a message built from escaped values and then logged reads the
// same. (A literal "\n" and an escaped newline then look alike: what matters is that no value
// starts a line of its own.)
std::string escape_controls(std::string_view s);

// From now on every message `logger` writes passes through escape_controls; the line's own
// layout comes from `pattern` (spdlog's pattern syntax; "%+" is spdlog's default).
void escape_log_messages(spdlog::logger& logger, const std::string& pattern = "%+");

// The same for the default logger, as the daemons' mains use it.
void escape_default_log_messages();

}  // namespace railyard
