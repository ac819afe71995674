"""Runs inside the node namespace; see run.sh."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

RAILS = 8


def vfs_of(work):
    """Rail k's first VF (PCI address, netdev), from railyard's own view of the fixture."""
    out = subprocess.run([os.path.join(ARGS.bin, "railyard"), "topo", "--json", "--sysfs-root",
                          os.path.join(work, "root"), "--rails", os.path.join(work, "rails.json")],
                         capture_output=True, check=True).stdout
    nics = sorted((n for n in json.loads(out)["nics"] if n["rail"] is not None), key=lambda n: n["rail"])
    return [(n["vfs"][0]["pci"], n["vfs"][0]["netdev"]) for n in nics]


def ipam(k, work):
    return {"type": "host-local", "dataDir": os.path.join(work, "ipam"),
            "ranges": [[{"subnet": f"10.10.{k}.0/24", "gateway": f"10.10.{k}.1"}]]}


def conflist(path, name, plugins):
    with open(path, "w") as f:
        json.dump({"cniVersion": "1.0.0", "name": name, "plugins": plugins}, f)
    return path


def libcni(command, conf, ifname):
    r = subprocess.run([os.path.join(ARGS.bin, "libcni-driver"), command, conf, f"/var/run/netns/{ARGS.pod}",
                        "bench", ifname, f"{ARGS.bin}:/usr/lib/cni", os.path.join(ARGS.work, "cache")],
                       capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"libcni {command} {conf} {ifname}: {r.stdout.decode()} {r.stderr.decode()}")


def add_del(conf, ifname):
    start = time.perf_counter()
    libcni("ADD", conf, ifname)
    libcni("DEL", conf, ifname)
    return (time.perf_counter() - start) * 1000


def floor_moves(netdev):
    """The kernel's part both pay: the VF stand-in into the pod's namespace and back."""
    start = time.perf_counter()
    subprocess.run(["ip", "link", "set", netdev, "netns", ARGS.pod], check=True)
    subprocess.run(["ip", "-n", ARGS.pod, "link", "set", netdev, "netns", str(os.getpid())], check=True)
    return (time.perf_counter() - start) * 1000


def spawn_pair():
    """What starting two processes from here costs (/bin/true): taken off each floor part, which
    this script measures by starting `ip` or host-local, so that the floor is the kernel's move
    and host-local's own run, not this script's fork and exec."""
    start = time.perf_counter()
    subprocess.run(["/bin/true"], check=True, capture_output=True)
    subprocess.run(["/bin/true"], check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


def floor_ipam(k):
    """host-local ADD+DEL exec'd alone: the IPAM both run once per ADD and once per DEL."""
    conf = json.dumps({"cniVersion": "1.0.0", "name": f"floor{k}", "ipam": ipam(k, ARGS.work)}).encode()
    start = time.perf_counter()
    for command in ("ADD", "DEL"):
        env = dict(os.environ, CNI_COMMAND=command, CNI_CONTAINERID="floor", CNI_IFNAME="net9",
                   CNI_NETNS=f"/var/run/netns/{ARGS.pod}", CNI_PATH="/usr/lib/cni")
        subprocess.run(["/usr/lib/cni/host-local"], input=conf, env=env, capture_output=True, check=True)
    return (time.perf_counter() - start) * 1000


def main():
    vfs = vfs_of(ARGS.work)
    os.environ["RAILYARD_SYSFS_ROOT"] = os.path.join(ARGS.work, "root")
    os.environ["RAILYARD_RAILS_FILE"] = os.path.join(ARGS.work, "rails.json")
    policy = os.path.join(ARGS.work, "cni-policy.json")  # the node policy: this run's state dir
    with open(policy, "w") as f:
        json.dump({"stateDir": os.path.join(ARGS.work, "state")}, f)
    os.environ["RAILYARD_CNI_POLICY"] = policy
    for _, netdev in vfs:  # the VF stand-ins: veth ends named as the fixture's VF netdevs
        subprocess.run(["ip", "link", "add", netdev, "type", "veth", "peer", "name", netdev + "x"], check=True)
        subprocess.run(["ip", "link", "set", netdev + "x", "up"], check=True)
    ours, chain = [], []
    for k, (pci, netdev) in enumerate(vfs):
        ours.append(conflist(os.path.join(ARGS.work, f"ours{k}.conflist"), f"rail{k}", [
            {"type": "railyard-cni", "deviceID": pci, "ipam": ipam(k, ARGS.work)}]))
        chain.append(conflist(os.path.join(ARGS.work, f"chain{k}.conflist"), f"rail{k}", [
            {"type": "host-device", "device": netdev, "ipam": ipam(k, ARGS.work)}, {"type": "sbr"}]))
    samples = {"railyard-cni": [], "host-device + sbr": [], "ip link set netns, twice": [],
               "host-local ADD+DEL": [], "spawn /bin/true, twice": []}
    for i in range(ARGS.rounds):  # interleaved, so drift on the machine hits all alike
        for k, (_, netdev) in enumerate(vfs):
            samples["ip link set netns, twice"].append(floor_moves(netdev))
            samples["spawn /bin/true, twice"].append(spawn_pair())
            samples["host-local ADD+DEL"].append(floor_ipam(k))
            samples["railyard-cni"].append(add_del(ours[k], f"net{k + 1}"))
            samples["host-device + sbr"].append(add_del(chain[k], f"net{k + 1}"))
        print(f"\rround {i + 1}/{ARGS.rounds} ({RAILS} rails each)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    med = {n: statistics.median(v) for n, v in samples.items()}
    spawn = med["spawn /bin/true, twice"]
    med["floor: netns moves"] = med["ip link set netns, twice"] - spawn
    med["floor: host-local"] = med["host-local ADD+DEL"] - spawn
    floor = med["floor: netns moves"] + med["floor: host-local"]
    above = {n: med[n] - floor for n in ("railyard-cni", "host-device + sbr")}
    print(f"per-rail ADD+DEL through libcni, 512-VF fixture node, {ARGS.rounds} rounds x {RAILS} rails, medians")
    for n in ("railyard-cni", "host-device + sbr", "ip link set netns, twice", "host-local ADD+DEL",
              "spawn /bin/true, twice", "floor: netns moves", "floor: host-local"):
        print(f"  {n:<26}{med[n]:>9.2f} ms")
    print(f"  {'floor (both pay)':<26}{floor:>9.2f} ms")
    print(f"above the floor: railyard-cni {above['railyard-cni']:.2f} ms, host-device + sbr "
          f"{above['host-device + sbr']:.2f} ms")
    if above["railyard-cni"] <= 0:
        print("  (railyard-cni at the floor: a negative figure is the run-to-run noise of the kernel's "
              "moves, a few ms here)")
    end_to_end = med["host-device + sbr"] / med["railyard-cni"]
    chain_above = above["host-device + sbr"]
    own = max(above["railyard-cni"], 0) / chain_above if chain_above > 0 else float("inf")
    print(f"end to end: railyard-cni is {end_to_end:.2f}x the chain's speed "
          f"(target > 1: {'met' if end_to_end > 1 else 'MISSED'})")
    print(f"above the floor: railyard-cni costs {own:.2f} of the chain's "
          f"(target <= 1/3: {'met' if own <= 1 / 3 else 'MISSED'})")
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump({"medians_ms": med, "floor_ms": floor, "above_floor_ms": above,
                       "end_to_end_ratio": end_to_end, "above_floor_ratio": own,
                       "rounds": ARGS.rounds, "rails": RAILS}, f, indent=2)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("rounds", nargs="?", type=int, default=10)
    p.add_argument("--pod", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--json")
    ARGS = p.parse_args()
    main()
