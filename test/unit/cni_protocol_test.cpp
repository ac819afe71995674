// The CNI protocol skeleton without a kernel: environment, versions, results, dispatch.
#include <catch2/catch.hpp>
#include <sstream>

#include "cni-protocol/env.h"
#include "cni-protocol/error.h"
#include "cni-protocol/plugin.h"
#include "cni-protocol/result.h"
#include "cni-protocol/version.h"

using namespace railyard::cni;
using nlohmann::json;

namespace {

Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

int error_code(const std::function<void()>& f) {
  try {
    f();
  } catch (const CniError& e) {
    return e.code();
  }
  return 0;
}

const std::map<std::string, std::string> kAdd = {{"CNI_COMMAND", "ADD"},
                                                 {"CNI_CONTAINERID", "ctr-1"},
                                                 {"CNI_NETNS", "/var/run/netns/x"},
                                                 {"CNI_IFNAME", "net1"},
                                                 {"CNI_PATH", "/opt/cni/bin::/usr/lib/cni"}};

}  // namespace

TEST_CASE("CNI environment: parsed per command", "[cni][protocol]") {
  Env e = parse_env(env_of(kAdd));
  CHECK(e.command == Command::kAdd);
  CHECK(e.container_id == "ctr-1");
  CHECK(e.ifname == "net1");
  CHECK(e.path == std::vector<std::string>{"/opt/cni/bin", "/usr/lib/cni"});
  auto with_args = kAdd;
  with_args["CNI_ARGS"] = "IgnoreUnknown=1;K8S_POD_NAME=p;K8S_POD_NAMESPACE=default";
  CHECK(parse_env(env_of(with_args)).args.at("K8S_POD_NAME") == "p");
  auto del = kAdd;
  del["CNI_COMMAND"] = "DEL";
  del.erase("CNI_NETNS");  // allowed for DEL
  CHECK(parse_env(env_of(del)).netns.empty());
  CHECK(parse_env(env_of({{"CNI_COMMAND", "VERSION"}})).command == Command::kVersion);
  CHECK(parse_env(env_of({{"CNI_COMMAND", "STATUS"}})).command == Command::kStatus);
}

TEST_CASE("CNI environment: missing or malformed variables are code 4", "[cni][protocol]") {
  auto without = [](const std::string& k) {
    auto m = kAdd;
    m.erase(k);
    return m;
  };
  auto with = [](const std::string& k, const std::string& v) {
    auto m = kAdd;
    m[k] = v;
    return m;
  };
  for (const auto& vars :
       {without("CNI_COMMAND"), without("CNI_CONTAINERID"), without("CNI_IFNAME"),
        without("CNI_NETNS"), with("CNI_COMMAND", "ATTACH"),
        with("CNI_IFNAME", "a-name-longer-than-15"), with("CNI_IFNAME", "net/1"),
        with("CNI_IFNAME", "net 1"), with("CNI_IFNAME", ".."), with("CNI_CONTAINERID", "../../etc"),
        with("CNI_ARGS", "novalue")}) {
    INFO(json(vars).dump());
    CHECK(error_code([&] { parse_env(env_of(vars)); }) == kInvalidEnvironment);
  }
  CHECK(valid_ifname("eth0"));
  CHECK(valid_ifname("123456789012345"));
  CHECK_FALSE(valid_ifname("1234567890123456"));
  CHECK_FALSE(valid_ifname("a:b"));
}

TEST_CASE("CNI versions", "[cni][protocol]") {
  for (const char* v : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    CHECK(is_supported_version(v));
  CHECK_FALSE(is_supported_version("0.2.0"));
  CHECK_FALSE(is_supported_version("2.0.0"));
  CHECK(compare_versions("0.4.0", "1.0.0") == -1);
  CHECK(compare_versions("1.1.0", "1.1.0") == 0);
  CHECK_FALSE(compare_versions("1.x", "1.0.0"));
  CHECK(at_least("1.1.0", "1.0.0"));
  CHECK_FALSE(at_least("0.4.0", "1.0.0"));
}

TEST_CASE("results: read and written per version", "[cni][protocol]") {
  const json in = {{"cniVersion", "1.1.0"},
                   {"interfaces",
                    {{{"name", "net1"},
                      {"mac", "02:00:00:00:00:01"},
                      {"sandbox", "/ns"},
                      {"mtu", 9000},
                      {"pciID", "0000:19:00.2"}}}},
                   {"ips",
                    {{{"address", "10.0.0.2/24"}, {"gateway", "10.0.0.1"}, {"interface", 0}},
                     {{"address", "fd00::2/64"}, {"interface", 0}}}},
                   {"routes", {{{"dst", "10.9.0.0/16"}, {"gw", "10.0.0.254"}, {"table", 100}}}},
                   {"dns", {{"nameservers", {"10.0.0.53"}}}}};
  const Result r = parse_result(in);
  CHECK(to_json(r, "1.1.0") == in);
  const json v10 = to_json(r, "1.0.0");
  CHECK_FALSE(v10["interfaces"][0].contains("mtu"));
  CHECK_FALSE(v10["interfaces"][0].contains("pciID"));
  CHECK_FALSE(v10["routes"][0].contains("table"));
  CHECK_FALSE(v10["ips"][0].contains("version"));
  const json v04 = to_json(r, "0.4.0");
  CHECK(v04["ips"][0]["version"] == "4");
  CHECK(v04["ips"][1]["version"] == "6");
  CHECK(v04["cniVersion"] == "0.4.0");
  // A 0.3.1 result with ips[].version reads back the same.
  CHECK(to_json(parse_result(v04), "1.1.0")["ips"] == in["ips"]);
}

TEST_CASE("results: every malformed field is a decode error naming it", "[cni][protocol]") {
  auto msg = [](const json& j) {
    try {
      parse_result(j);
    } catch (const CniError& e) {
      CHECK(e.code() == kDecodeFailure);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(msg(json::array()) == "prevResult: must be an object");
  CHECK(msg({{"interfaces", {{{"mac", "x"}}}}}) == "prevResult: interfaces[0].name is missing");
  CHECK(msg({{"ips", {{{"address", "10.0.0.2"}}}}}) ==
        "prevResult: ips[0].address '10.0.0.2' is not an address with a prefix length");
  CHECK(msg({{"ips", {{{"address", "10.0.0.2/24"}, {"gateway", "fd00::1"}}}}}) ==
        "prevResult: ips[0].gateway is not an address of the same family");
  CHECK(msg({{"ips", {{{"address", "10.0.0.2/24"}, {"interface", 3}}}}}) ==
        "prevResult: ips[0].interface 3 is not an index into interfaces");
  CHECK(msg({{"routes", {{{"dst", "10.0.0.0/33"}}}}}) ==
        "prevResult: routes[0].dst is not a prefix");
  CHECK(msg({{"routes", {{{"dst", "10.0.0.0/8"}, {"mtu", "big"}}}}}) ==
        "prevResult: routes[0].mtu must be an integer");
  CHECK(msg({{"dns", "8.8.8.8"}}) == "prevResult: dns must be an object");
}

TEST_CASE("plugin_main: VERSION, dispatch, error objects on stdout", "[cni][protocol]") {
  Handlers h;
  int adds = 0;
  h.add = [&](const Request& r) {
    ++adds;
    CHECK(r.prev_result.has_value() == r.config.contains("prevResult"));
    return json{{"cniVersion", r.version}};
  };
  h.del = [](const Request&) { throw CniError(kTryAgainLater, "busy", "try later"); };
  h.check = [](const Request&) {};
  auto call = [&](std::map<std::string, std::string> env, const std::string& in) {
    std::istringstream is(in);
    std::ostringstream os;
    int rc = plugin_main("test-plugin", h, is, os, env_of(env));
    return std::make_pair(rc, os.str());
  };
  auto [rc, out] = call({{"CNI_COMMAND", "VERSION"}}, R"({"cniVersion": "0.4.0"})");
  CHECK(rc == 0);
  CHECK(json::parse(out) ==
        json{{"cniVersion", "0.4.0"},
             {"supportedVersions", {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}}});
  std::tie(rc, out) = call(kAdd, R"({"cniVersion": "1.0.0", "name": "n", "type": "t"})");
  CHECK(rc == 0);
  CHECK(adds == 1);
  auto del = kAdd;
  del["CNI_COMMAND"] = "DEL";
  std::tie(rc, out) = call(del, R"({"cniVersion": "1.0.0", "name": "n", "type": "t"})");
  CHECK(rc == 1);
  CHECK(json::parse(out) ==
        json{{"cniVersion", "1.0.0"}, {"code", 11}, {"msg", "busy"}, {"details", "try later"}});
  std::tie(rc, out) = call(kAdd, R"({"cniVersion": "7.0.0"})");
  CHECK(json::parse(out)["code"] == kIncompatibleVersion);
  CHECK(json::parse(out)["cniVersion"] == "1.1.0");  // answered in a version we speak
  std::tie(rc, out) = call(kAdd, R"({"cniVersion": "1.0.0", "mtu": 1e999})");
  CHECK(json::parse(out)["code"] == kDecodeFailure);  // found by the fuzzer
  std::tie(rc, out) = call(kAdd, R"({"name": "n"})");
  CHECK(json::parse(out)["code"] == kDecodeFailure);
  std::tie(rc, out) = call(kAdd, R"({"cniVersion": "1.0.0", "type": 7})");
  CHECK(json::parse(out)["code"] == kInvalidConfig);
  // The spec requires a name; host-local keys its files by it, so a path is refused too.
  std::tie(rc, out) = call(kAdd, R"({"cniVersion": "1.0.0", "type": "t"})");
  CHECK(json::parse(out)["code"] == kInvalidConfig);
  CHECK(json::parse(out)["msg"] == "network configuration has no 'name'");
  for (const char* bad : {R"("")", R"("../etc")", R"("-x")", R"("a b")", "7"}) {
    std::tie(rc, out) =
        call(kAdd, std::string(R"({"cniVersion": "1.0.0", "type": "t", "name": )") + bad + "}");
    INFO(bad);
    CHECK(json::parse(out)["code"] == kInvalidConfig);
  }
  std::tie(rc, out) = call(kAdd, R"({"cniVersion": "1.0.0", "type": "t", "name": "Rail_0.a-b"})");
  CHECK(rc == 0);
  auto check = kAdd;
  check["CNI_COMMAND"] = "CHECK";
  std::tie(rc, out) = call(check, R"({"cniVersion": "0.3.1", "name": "n"})");
  CHECK(json::parse(out)["code"] == kIncompatibleVersion);
  auto status = kAdd;
  status["CNI_COMMAND"] = "STATUS";
  std::tie(rc, out) = call(status, R"({"cniVersion": "1.0.0"})");
  CHECK(json::parse(out)["code"] == kIncompatibleVersion);
  std::tie(rc, out) = call(status, R"({"cniVersion": "1.1.0", "name": "n"})");
  CHECK(rc == 0);
  CHECK(out.empty());
  CHECK(adds == 2);
}
