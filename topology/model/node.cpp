#include "topology/model/node.h"

namespace railyard::topology {

const RdmaPort* Nic::port() const {
  if (!pf.rdma || pf.rdma->ports.empty()) return nullptr;
  return &pf.rdma->ports.front();
}

std::string Nic::link_layer() const {
  const RdmaPort* p = port();
  return p ? p->link_layer : "";
}

std::optional<FunctionRef> Node::find_function(const PciAddress& addr) const {
  for (size_t i = 0; i < nics.size(); ++i) {
    if (nics[i].pf.pci.address == addr) return FunctionRef{static_cast<int>(i), -1};
    for (size_t v = 0; v < nics[i].vfs.size(); ++v)
      if (nics[i].vfs[v].pci.address == addr)
        return FunctionRef{static_cast<int>(i), static_cast<int>(v)};
  }
  return std::nullopt;
}

const NicFunction& Node::function(const FunctionRef& ref) const {
  const Nic& nic = nics.at(static_cast<size_t>(ref.nic));
  return ref.vf < 0 ? nic.pf : nic.vfs.at(static_cast<size_t>(ref.vf));
}

int Node::rail_of(const PciAddress& addr) const {
  auto ref = find_function(addr);
  return ref ? nics[static_cast<size_t>(ref->nic)].rail : -1;
}

}  // namespace railyard::topology
