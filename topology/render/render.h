// `railyard topo` for people: a matrix like `nvidia-smi topo -m`, its legend, and the rail and
// bundle tables.
#pragma once

#include <ostream>

#include "topology/model/node.h"

namespace railyard::topology {

void render_text(const Node& node, std::ostream& out);

}  // namespace railyard::topology
