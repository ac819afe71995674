// Text for XML and SVG documents (JUnit reports, plots, heatmaps): & < > " escaped, so that a
// name or message can sit in element text and in attribute values alike; control characters
// that XML 1.0 cannot carry (all but tab, newline, carriage return) written as \xHH.
#pragma once

#include <string>
#include <string_view>

namespace railyard {

std::string xml_escape(std::string_view s);

}  // namespace railyard
