"""Runs inside the node namespace; see run.sh."""
import argparse
import json
import os
import statistics
import subprocess
import time

RAILS = 8


def pci_of(work):
    """Rail k's VF PCI address, from railyard's own view of the fixture."""
    out = subprocess.run([os.path.join(os.path.dirname(ARGS.ours), "railyard"), "topo", "--json", "--sysfs-root",
                          os.path.join(work, "root"), "--rails", os.path.join(work, "rails.json")],
                         capture_output=True, check=True).stdout
    topo = json.loads(out)
    return [n["vfs"][0]["pci"] for n in topo["nics"] if n["rail"] is not None]


def ipam(k, work):
    return {"type": "host-local", "dataDir": os.path.join(work, "ipam"),
            "ranges": [[{"subnet": f"10.10.{k}.0/24", "gateway": f"10.10.{k}.1"}]]}


def call(binary, command, ifname, conf, pod):
    env = dict(os.environ, CNI_COMMAND=command, CNI_CONTAINERID="bench", CNI_IFNAME=ifname,
               CNI_NETNS=f"/var/run/netns/{pod}", CNI_PATH="/usr/lib/cni")
    r = subprocess.run([binary], input=json.dumps(conf).encode(), env=env, capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"{binary} {command} {ifname}: {r.stdout.decode()} {r.stderr.decode()}")
    return json.loads(r.stdout) if r.stdout.strip() else None


def ours_rail(k, pod, work, pcis):
    conf = {"cniVersion": "1.0.0", "name": f"rail{k}", "type": "railyard-cni", "deviceID": pcis[k],
            "stateDir": os.path.join(work, "state"), "ipam": ipam(k, work)}
    start = time.perf_counter()
    call(ARGS.ours, "ADD", f"net{k + 1}", conf, pod)
    call(ARGS.ours, "DEL", f"net{k + 1}", conf, pod)
    return (time.perf_counter() - start) * 1000


def reference_rail(k, pod, work):
    """What libcni does for the conflist [host-device, sbr]: ADD in order, DEL in reverse."""
    hd = {"cniVersion": "1.0.0", "name": f"rail{k}", "type": "host-device", "device": f"ryvf{k}",
          "ipam": ipam(k, work)}
    start = time.perf_counter()
    res = call("/usr/lib/cni/host-device", "ADD", f"net{k + 1}", hd, pod)
    sbr = {"cniVersion": "1.0.0", "name": f"rail{k}", "type": "sbr", "prevResult": res}
    res = call("/usr/lib/cni/sbr", "ADD", f"net{k + 1}", sbr, pod)
    call("/usr/lib/cni/sbr", "DEL", f"net{k + 1}", dict(sbr, prevResult=res), pod)
    call("/usr/lib/cni/host-device", "DEL", f"net{k + 1}", dict(hd, prevResult=res), pod)
    return (time.perf_counter() - start) * 1000


def move_floor(pod):
    """The kernel's part that both pay: the VF stand-in into the pod's namespace and back."""
    start = time.perf_counter()
    subprocess.run(["ip", "link", "set", "ryvfx0", "netns", pod], check=True)
    subprocess.run(["ip", "-n", pod, "link", "set", "ryvfx0", "netns", str(os.getpid())], check=True)
    return (time.perf_counter() - start) * 1000


def main():
    pcis = pci_of(ARGS.work)
    os.environ["RAILYARD_SYSFS_ROOT"] = os.path.join(ARGS.work, "root")
    os.environ["RAILYARD_RAILS_FILE"] = os.path.join(ARGS.work, "rails.json")
    per_rail = {"railyard-cni": [], "host-device + sbr": []}
    total = {"railyard-cni": [], "host-device + sbr": []}
    floor = []
    for i in range(ARGS.rounds):  # interleaved, so drift on the machine hits both alike
        floor.append(move_floor(ARGS.pod))
        for name, fn in (("railyard-cni", lambda k: ours_rail(k, ARGS.pod, ARGS.work, pcis)),
                         ("host-device + sbr", lambda k: reference_rail(k, ARGS.pod, ARGS.work))):
            times = [fn(k) for k in range(RAILS)]
            per_rail[name] += times
            total[name].append(sum(times))
        print(f"\rround {i + 1}/{ARGS.rounds}", end="", flush=True)
    print()
    print(f"{'plugins':<20}{'per-rail ADD+DEL median':>26}{'8-rail total median':>22}")
    med = {}
    for name in per_rail:
        med[name] = statistics.median(per_rail[name])
        print(f"{name:<20}{med[name]:>23.2f} ms{statistics.median(total[name]):>19.1f} ms")
    ratio = med["host-device + sbr"] / med["railyard-cni"]
    print(f"ratio per rail: railyard-cni is {ratio:.1f}x faster (target >= 5x: {'met' if ratio >= 5 else 'MISSED'})")
    f = statistics.median(floor)
    own = {n: m - f for n, m in med.items()}
    print(f"kernel floor: moving a netdev into a namespace and back (ip link set netns, twice) = {f:.1f} ms;"
          f" without it: railyard-cni {own['railyard-cni']:.1f} ms, reference {own['host-device + sbr']:.1f} ms,"
          f" ratio {own['host-device + sbr'] / max(own['railyard-cni'], 0.01):.1f}x")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--pod", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--ours", required=True)
    p.add_argument("--rounds", type=int, default=20)
    ARGS = p.parse_args()
    main()
