#include "nccl-tests-wrapper/fleet/coordinator.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include "common/k8s_names.h"
#include "common/log_escape.h"
#include "nccl-tests-wrapper/checks/firmware.h"
#include "nccl-tests-wrapper/fleet/control.h"
#include "nccl-tests-wrapper/fleet/messages.h"
#include "nccl-tests-wrapper/fleet/pair.h"
#include "nccl-tests-wrapper/fleet/probe.h"
#include "nccl-tests-wrapper/fleet/ring.h"
#include "nccl-tests-wrapper/fleet/schedule.h"
#include "nccl-tests-wrapper/fleet/serve.h"
#include "rdma/run/launch.h"
#include "rdma/transport/admission.h"
#include "topology/discover/discover.h"
#include "topology/model/rails.h"

namespace railyard::validate {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Member {
  rdma::Socket control;
  std::string node;
  std::vector<std::string> addresses;
  std::vector<std::string> macs;      // of each rail's NIC
  std::vector<std::string> firmware;  // of each of its node's rail NICs
  std::string lost;                   // why rank 0 stopped talking to it; empty while it answers
  bool joined = false;                // its hello was accepted
};

class Coordinator {
 public:
  Coordinator(const FleetSettings& s, int world, size_t rails, const rdma::ChannelKey& key,
              std::ostream& progress)
      : s_(s),
        world_(world),
        rails_(rails),
        key_(key),
        progress_(progress),
        timeout_(std::chrono::seconds(s.bench.timeout_s)) {}

  // Admits joiners, each in a thread of its own (rdma/transport/admission.h), until every rank is
  // in or the timeout passes. A connection that fails the token, sends junk or a hello of the
  // wrong shape, stays silent, or claims a rank that has joined already is dropped with a line in
  // the progress, and the fleet goes on waiting for the real rank.
  void join(const rdma::Socket& server) {
    members_.resize(static_cast<size_t>(world_));
    std::set<int> awaited;
    for (int r = 0; r < world_; ++r) awaited.insert(r);
    const rdma::Admit admit = [&](const rdma::Socket& c, const std::string& from,
                                  Clock::time_point by) {
      rdma::prove_as_acceptor(c, key_, "fleet", from, by);
      const auto wait =
          std::max(std::chrono::milliseconds(1),
                   std::chrono::duration_cast<std::chrono::milliseconds>(by - Clock::now()));
      const json m = recv_message(c, from, wait, kHelloBytes);
      const Hello hello = parse_hello(m, world_, rails_, from);
      rdma::Joiner j;
      j.rank = hello.rank;
      j.hello = m.dump();
      return j;
    };
    const rdma::DoorOptions door{
        timeout_, "to join the fleet (world size " + std::to_string(world_) + ")",
        [&](const std::string& why) {
          progress_ << "# rendezvous: dropped " << escape_controls(why) << "\n" << std::flush;
        }};
    // The hello is parsed again from what the admitting thread kept (it checked it already).
    rdma::admit_ranks(server, awaited, admit, door, [&](rdma::Joiner j) {
      const Hello hello =
          parse_hello(json::parse(j.hello), world_, rails_, "rank " + std::to_string(j.rank));
      Member& m = members_[static_cast<size_t>(j.rank)];
      m.control = std::move(j.socket);
      m.node = hello.node;
      m.addresses = hello.rails;
      m.macs = hello.macs;
      m.firmware = hello.firmware;
      m.joined = true;
    });
  }

  // What rank 0 knows of a run it could not make: which ranks had joined, by node name.
  FleetReport not_run(const std::string& why) const {
    std::vector<std::optional<std::string>> joined(static_cast<size_t>(world_));
    for (size_t r = 0; r < members_.size() && r < joined.size(); ++r)
      if (members_[r].joined) joined[r] = members_[r].node;
    return fleet_not_run(why, joined, static_cast<int>(rails_));
  }

  FleetReport run() {
    const auto start = Clock::now();
    FleetReport report;
    for (const auto& m : members_) {
      report.nodes.push_back(m.node);
      report.firmware.push_back(m.firmware);
    }
    report.rails = static_cast<int>(rails_);
    const auto rounds = s_.mode == "bisect" ? bisect(report) : round_robin(world_);
    measure(rounds, report);
    // The verdict sees every pair at its share of its round, in the fleet's GB/s.
    std::vector<PairResult> leveled = report.results;
    const double fleet = fleet_median_busbw(report.results);
    for (size_t j = 0; j < leveled.size(); ++j)
      leveled[j].busbw =
          report.relative[j] ? std::optional(*report.relative[j] * fleet) : std::nullopt;
    const auto sightings = s_.probe ? probe_suspects(leveled) : std::vector<Sighting>{};
    report.culprits =
        classify_fleet(world_, report.rails, leveled, sightings, {s_.slow_fraction, report.nodes});
    // A rank that stopped answering is its node's fault, whatever its pairs looked like before
    // (they may have been fine): it replaces every culprit that involves it.
    for (size_t r = 0; r < members_.size(); ++r) {
      if (members_[r].lost.empty()) continue;
      const int node = static_cast<int>(r);
      const std::string why = "rank " + std::to_string(r) + " (" + members_[r].node +
                              ") stopped answering during the run: " + members_[r].lost;
      std::erase_if(report.culprits,
                    [&](const Culprit& c) { return c.node == node || c.peer == node; });
      report.culprits.push_back({"node", node, -1, -1, -1, why});
      report.problems.push_back(why);
    }
    char line[160];
    std::snprintf(line, sizeof line, "# %zu ring runs, %zu rounds of pairs, %.1f s\n",
                  report.rings.size(), rounds.size(),
                  std::chrono::duration<double>(Clock::now() - start).count());
    progress_ << line << std::flush;
    return report;
  }

  void finish() {
    for (auto& m : members_)
      if (m.lost.empty()) try {
          send_message(m.control, {{"op", "done"}}, m.node);
        } catch (const std::exception&) {
        }
    members_.clear();  // closing the control connections lets every rank go
  }

 private:
  // reply[key] as one value per rail (null where missing), however short or absent it is.
  std::vector<json> rail_values(const std::optional<json>& reply, const char* key) const {
    std::vector<json> v(rails_);
    if (reply && reply->contains(key) && (*reply)[key].is_array())
      for (size_t k = 0; k < rails_ && k < (*reply)[key].size(); ++k) v[k] = (*reply)[key][k];
    return v;
  }

  // A listen answer's ports, one per rail; a rank whose answer has another shape is lost.
  std::optional<std::vector<int>> checked_ports(int r, const json& reply) {
    try {
      return parse_ports(reply, rails_, name(r));
    } catch (const rdma::NetError& e) {
      members_[static_cast<size_t>(r)].lost = e.what();
      return std::nullopt;
    }
  }

  bool slow(const PairResult& r, double median) const {
    return !r.busbw || *r.busbw < median * s_.slow_fraction;
  }

  std::string name(int r) const {
    return "rank " + std::to_string(r) + " (" + members_[static_cast<size_t>(r)].node + ")";
  }

  // A rank that fails a request or its answer is lost for the rest of the run: its pairs are
  // silent, which the classification names.
  bool send(int r, const json& request) {
    Member& m = members_[static_cast<size_t>(r)];
    if (!m.lost.empty()) return false;
    try {
      send_message(m.control, request, name(r));
      return true;
    } catch (const std::exception& e) {
      m.lost = e.what();
      return false;
    }
  }
  std::optional<json> answer(int r, std::chrono::milliseconds wait) {
    Member& m = members_[static_cast<size_t>(r)];
    if (!m.lost.empty()) return std::nullopt;
    try {
      json a = recv_message(m.control, name(r), wait);
      if (!a.is_object()) throw rdma::NetError(name(r) + " answered with something not an object");
      if (a.contains("error") && !a["error"].is_string())
        throw rdma::NetError(name(r) + " answered with an error that is not text");
      if (a.contains("error") && !a.contains("busbw")) {
        progress_ << "#   " << name(r) << ": " << escape_controls(a["error"].get<std::string>())
                  << "\n";
        return std::nullopt;
      }
      return a;
    } catch (const std::exception& e) {
      m.lost = e.what();
      return std::nullopt;
    }
  }

  // Runs the rounds, then again each round that holds a suspect (`repeat` times), keeping for
  // each pair-rail the run where it did best against its run's median pair.
  void measure(const std::vector<Round>& rounds, FleetReport& report) {
    std::vector<std::vector<PairResult>> kept;
    std::vector<std::vector<std::optional<double>>> share;
    for (size_t i = 0; i < rounds.size(); ++i) {
      kept.push_back(run_round(
          rounds[i], "round " + std::to_string(i + 1) + "/" + std::to_string(rounds.size())));
      share.push_back(relative_to_run(kept.back()));
    }
    auto suspect = [&](const std::optional<double>& x) { return !x || *x < s_.slow_fraction; };
    for (int rep = 0; rep < s_.repeat; ++rep)
      for (size_t i = 0; i < rounds.size(); ++i) {
        if (std::none_of(share[i].begin(), share[i].end(), suspect)) continue;
        const auto again = run_round(rounds[i], "repeat of round " + std::to_string(i + 1));
        const auto again_share = relative_to_run(again);
        for (size_t j = 0; j < again.size(); ++j)  // the better run: noise only ever slows
          if (again_share[j] && (!share[i][j] || *again_share[j] > *share[i][j])) {
            share[i][j] = again_share[j];
            kept[i][j] = again[j];
          }
      }
    for (size_t i = 0; i < rounds.size(); ++i) {
      report.results.insert(report.results.end(), kept[i].begin(), kept[i].end());
      report.relative.insert(report.relative.end(), share[i].begin(), share[i].end());
    }
  }

  // The fast path: a ring over everyone, then halves side by side; a slow half (on any rail)
  // is halved again, down to groups of 2 or 3 whose members are the suspects. Returns the rounds
  // that test each suspect against two nodes found good.
  std::vector<Round> bisect(FleetReport& report) {
    std::vector<int> all(static_cast<size_t>(world_));
    for (int r = 0; r < world_; ++r) all[static_cast<size_t>(r)] = r;
    report.rings.push_back(run_rings({all}, "all nodes").at(0));
    std::vector<std::vector<int>> groups{all};
    std::vector<int> suspects;
    for (int level = 1; !groups.empty(); ++level) {
      std::vector<std::vector<int>> halves;
      for (const auto& g : groups) {
        if (g.size() <= 3) {
          suspects.insert(suspects.end(), g.begin(), g.end());
          continue;
        }
        const auto mid = g.begin() + static_cast<long>(g.size() / 2);
        halves.emplace_back(g.begin(), mid);
        halves.emplace_back(mid, g.end());
      }
      groups.clear();
      if (halves.empty()) break;
      const auto runs = run_rings(halves, "halving " + std::to_string(level));
      std::vector<std::vector<std::optional<double>>> busbw;
      for (const auto& run : runs) busbw.push_back(run.busbw);
      const auto slow = slow_rings(busbw, s_.slow_fraction);
      for (size_t h = 0; h < halves.size(); ++h)
        if (slow[h]) groups.push_back(halves[h]);
      report.rings.insert(report.rings.end(), runs.begin(), runs.end());
    }
    std::sort(suspects.begin(), suspects.end());
    std::string names;
    for (int r : suspects) names += " " + members_[static_cast<size_t>(r)].node;
    progress_ << "# suspects:" << (names.empty() ? " none" : names) << "\n";
    return suspect_rounds(world_, suspects);
  }

  // Rings over disjoint groups, all at once.
  std::vector<RingRun> run_rings(const std::vector<std::vector<int>>& groups,
                                 const std::string& title) {
    const auto start = Clock::now();
    std::map<int, std::vector<int>> ports;
    for (const auto& g : groups)
      for (int r : g) send(r, {{"op", "listen"}});
    for (const auto& g : groups)
      for (int r : g)
        if (auto reply = answer(r, timeout_))
          if (auto p = checked_ports(r, *reply)) ports[r] = *p;
    // Whoever was sent a ring is read back (see run_round).
    std::vector<std::vector<char>> sent(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) {
      const auto& g = groups[i];
      sent[i].assign(g.size(), 0);
      if (!std::all_of(g.begin(), g.end(), [&](int r) { return ports.count(r) > 0; })) continue;
      json table = json::array(), names = json::array();
      for (int r : g) {
        names.push_back(name(r));
        json eps = json::array();
        for (size_t k = 0; k < rails_; ++k)
          eps.push_back(json::array({members_[static_cast<size_t>(r)].addresses[k], ports[r][k]}));
        table.push_back(eps);
      }
      for (size_t m = 0; m < g.size(); ++m)
        sent[i][m] = send(g[m], {{"op", "ring"}, {"index", m}, {"table", table}, {"names", names}});
    }
    const auto wait = timeout_ * 4 + std::chrono::minutes(10);
    std::vector<RingRun> out;
    for (size_t i = 0; i < groups.size(); ++i) {
      const auto& g = groups[i];
      RingRun run{title, g, std::vector<std::optional<double>>(rails_)};
      for (size_t m = 0; m < g.size(); ++m) {
        const auto reply = sent[i][m] ? answer(g[m], wait) : std::nullopt;
        if (!reply) continue;
        const std::string error = reply->value("error", "");
        if (!error.empty()) errors_.push_back(title + ", " + name(g[m]) + ": " + error);
        if (m > 0) continue;  // the first member reports the ring's bandwidth
        const auto busbw = rail_values(reply, "busbw");
        for (size_t k = 0; k < rails_; ++k)
          if (busbw[k].is_number()) run.busbw[k] = busbw[k].get<double>();
      }
      char line[256];
      std::snprintf(line, sizeof line, "# %-20s ring of %3zu (%s..%s) %6.1f s  busbw",
                    title.c_str(), g.size(), members_[static_cast<size_t>(g.front())].node.c_str(),
                    members_[static_cast<size_t>(g.back())].node.c_str(),
                    std::chrono::duration<double>(Clock::now() - start).count());
      progress_ << line;
      for (const auto& b : run.busbw) {
        if (b)
          std::snprintf(line, sizeof line, " %.4g", *b);
        else
          std::snprintf(line, sizeof line, " silent");
        progress_ << line;
      }
      progress_ << " GB/s\n" << std::flush;
      out.push_back(std::move(run));
    }
    return out;
  }

  std::vector<PairResult> run_round(const std::vector<std::pair<int, int>>& pairs,
                                    const std::string& title) {
    const auto start = Clock::now();
    std::map<int, std::vector<int>> ports;
    for (const auto& [a, b] : pairs)
      for (int r : {a, b}) send(r, {{"op", "listen"}});
    for (const auto& [a, b] : pairs)
      for (int r : {a, b})
        if (auto reply = answer(r, timeout_))
          if (auto p = checked_ports(r, *reply)) ports[r] = *p;
    // Whoever was sent a pair is read back, even when its partner could not be sent one (it
    // then times out waiting and says so): an unread answer would be taken for the next one.
    std::vector<std::pair<bool, bool>> sent(pairs.size(), {false, false});
    for (size_t i = 0; i < pairs.size(); ++i) {
      const auto [a, b] = pairs[i];
      if (!ports.count(a) || !ports.count(b)) continue;
      auto endpoints = [&](int r) {
        json e = json::array();
        for (size_t k = 0; k < rails_; ++k)
          e.push_back(json::array({members_[static_cast<size_t>(r)].addresses[k], ports[r][k]}));
        return e;
      };
      sent[i] = {send(a, {{"op", "pair"}, {"role", 0}, {"peer", endpoints(b)}, {"name", name(b)}}),
                 send(b, {{"op", "pair"}, {"role", 1}, {"peer", endpoints(a)}, {"name", name(a)}})};
    }
    // A pair's rails connect within the timeout; a slow rail may take much longer to measure.
    const auto wait = timeout_ * 4 + std::chrono::minutes(10);
    std::vector<PairResult> out;
    for (size_t i = 0; i < pairs.size(); ++i) {
      const auto [a, b] = pairs[i];
      std::optional<json> ra, rb;
      if (sent[i].first) ra = answer(a, wait);
      if (sent[i].second) rb = answer(b, wait);
      const auto busbw = rail_values(ra, "busbw"), errors_a = rail_values(ra, "errors"),
                 errors_b = rail_values(rb, "errors");
      for (size_t k = 0; k < rails_; ++k) {
        PairResult p{a, b, static_cast<int>(k), std::nullopt};
        if (busbw[k].is_number()) p.busbw = busbw[k].get<double>();
        for (const json* e : {&errors_a[k], &errors_b[k]})
          if (e->is_string() && !e->get<std::string>().empty())
            errors_.push_back(title + ", " + name(a) + " - " + name(b) + " rail " +
                              std::to_string(k) + ": " + e->get<std::string>());
        out.push_back(p);
      }
    }
    report_round(title, out, std::chrono::duration<double>(Clock::now() - start).count());
    return out;
  }

  void report_round(const std::string& title, const std::vector<PairResult>& out, double seconds) {
    const double median = fleet_median_busbw(out);
    char line[256];
    std::snprintf(line, sizeof line, "# %-20s %3zu pair-rails %6.1f s  median %8.3f GB/s",
                  title.c_str(), out.size(), seconds, median);
    progress_ << line;
    if (const PairResult* worst = slowest_pair(out))
      progress_ << "  slowest " << members_[static_cast<size_t>(worst->a)].node << "-"
                << members_[static_cast<size_t>(worst->b)].node << " rail " << worst->rail << ": "
                << (worst->busbw ? gbps_text(*worst->busbw) : "silent");
    progress_ << "\n" << std::flush;
  }

  // A NIC slow or silent with every peer: which leaf's neighbours does it hear?
  std::vector<Sighting> probe_suspects(const std::vector<PairResult>& results) {
    const double median = fleet_median_busbw(results);
    std::map<std::pair<int, int>, std::pair<int, int>> count;  // (node, rail) -> (tested, bad)
    for (const auto& r : results)
      for (int n : {r.a, r.b}) {
        auto& c = count[{n, r.rail}];
        ++c.first;
        c.second += slow(r, median);
      }
    std::vector<Sighting> out;
    for (const auto& [key, c] : count) {
      const auto [node, rail] = key;
      if (c.first == 0 || c.second != c.first) continue;
      std::vector<std::string> targets;
      std::map<std::string, int> rail_of_mac;  // every peer NIC's MAC -> its rail
      for (int peer = 0; peer < world_; ++peer) {
        if (peer == node) continue;
        const Member& p = members_[static_cast<size_t>(peer)];
        for (size_t k = 0; k < rails_; ++k) {
          targets.push_back(p.addresses[k]);
          if (k < p.macs.size()) rail_of_mac[p.macs[k]] = static_cast<int>(k);
        }
      }
      if (!send(node, {{"op", "probe"}, {"rail", rail}, {"targets", targets}})) continue;
      const auto reply = answer(node, timeout_);
      if (!reply || !reply->contains("heard") || !(*reply)["heard"].is_array()) continue;
      // Counted by the NIC that answered, not by the address asked for: under the kernel's
      // default ARP settings a peer's NIC on this leaf answers for all of the peer's addresses.
      std::map<int, int> heard;  // rail -> answers from that rail's NICs
      for (const auto& mac : (*reply)["heard"]) {
        if (!mac.is_string()) continue;
        if (auto it = rail_of_mac.find(mac.get<std::string>()); it != rail_of_mac.end())
          ++heard[it->second];
      }
      std::string said;
      for (const auto& [k, n] : heard)
        said += " rail " + std::to_string(k) + ": " + std::to_string(n);
      progress_ << "# probe " << name(node) << " rail " << rail << ": peers heard by ARP"
                << (said.empty() ? " none" : said) << "\n";
      if (heard.count(rail) || heard.empty()) continue;
      const auto most = std::max_element(heard.begin(), heard.end(),
                                         [](auto& x, auto& y) { return x.second < y.second; });
      out.push_back({node, rail, most->first});
    }
    return out;
  }

 public:
  std::vector<std::string> errors_;

 private:
  const FleetSettings& s_;
  int world_;
  size_t rails_;
  const rdma::ChannelKey& key_;
  std::ostream& progress_;
  std::chrono::milliseconds timeout_;
  std::vector<Member> members_;
};

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an unknown error";
  }
}

}  // namespace

// Rank 0: opens the rendezvous, serves as a rank from a thread like every other, and
// coordinates. A run it cannot make still gives a report: why, and who had joined by then.
FleetReport coordinate(const FleetSettings& s, const rdma::Launch& launch, const FleetRails& rails,
                       const topology::Sysfs& sysfs, std::ostream& progress) {
  // Rank 0 listens before its own server connects.
  rdma::Socket server = rdma::Socket::listen_on("", rdma::Endpoint::parse(launch.rendezvous).port);
  std::exception_ptr served;
  std::thread self([&] {
    try {
      serve(s, launch, rails, sysfs);
    } catch (...) {
      served = std::current_exception();
    }
  });
  Coordinator c(s, launch.world, rails.addresses.size(), rails.key, progress);
  FleetReport report;
  try {
    c.join(server);
    report = c.run();
    report.problems.insert(report.problems.end(), c.errors_.begin(), c.errors_.end());
  } catch (...) {
    report = c.not_run(message_of(std::current_exception()));  // before finish() forgets them
  }
  c.finish();
  server = rdma::Socket();
  self.join();
  if (served)
    report.could_not_run += (report.could_not_run.empty() ? "" : "; ") +
                            ("rank 0 serving as a rank: " + message_of(served));
  return report;
}

}  // namespace railyard::validate
