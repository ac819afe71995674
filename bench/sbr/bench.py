"""Times ADD+DEL on 8 rails for two SBR plugins; see run.sh."""
import argparse
import json
import os
import statistics
import subprocess
import time

RAILS = 8


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def reset(pod):
    """Untimed: every rail back to 'IPAM just assigned its address', nothing of SBR left."""
    for k in range(RAILS):
        sh(f"ip -n {pod} addr flush dev net{k + 1}")
        sh(f"ip -n {pod} addr add 10.10.{k}.2/24 dev net{k + 1}")
    sh(f"ip -n {pod} rule flush 2>/dev/null || true; ip -n {pod} rule add priority 32766 table main"
       f" 2>/dev/null || true; ip -n {pod} rule add priority 32767 table default 2>/dev/null || true")
    for t in range(100, 100 + 2 * RAILS):
        subprocess.run(f"ip -n {pod} route flush table {t}", shell=True, stderr=subprocess.DEVNULL)


def config(k, plugin_type, pod):
    cfg = {"cniVersion": "1.0.0", "name": f"rail{k}", "type": plugin_type,
           "prevResult": {"cniVersion": "1.0.0",
                          "interfaces": [{"name": f"net{k + 1}", "sandbox": f"/var/run/netns/{pod}"}],
                          "ips": [{"address": f"10.10.{k}.2/24", "gateway": f"10.10.{k}.1", "interface": 0}],
                          "dns": {}}}
    if plugin_type == "railyard-sbr":
        cfg["rail"] = k
    return json.dumps(cfg).encode()


def one_round(binary, plugin_type, pod):
    reset(pod)
    inputs = [config(k, plugin_type, pod) for k in range(RAILS)]
    start = time.perf_counter()
    for command in ("ADD", "DEL"):
        for k in range(RAILS):
            env = dict(os.environ, CNI_COMMAND=command, CNI_CONTAINERID="bench", CNI_IFNAME=f"net{k + 1}",
                       CNI_NETNS=f"/var/run/netns/{pod}", CNI_PATH="/usr/lib/cni")
            r = subprocess.run([binary], input=inputs[k], env=env, capture_output=True)
            if r.returncode != 0:
                raise SystemExit(f"{binary} {command} net{k + 1} failed: {r.stdout.decode()} {r.stderr.decode()}")
    return (time.perf_counter() - start) * 1000


def exec_floor():
    start = time.perf_counter()
    for _ in range(2 * RAILS):
        subprocess.run(["/bin/true"], input=b"{}", capture_output=True)
    return (time.perf_counter() - start) * 1000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pod", required=True)
    p.add_argument("--ours", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--rounds", type=int, default=30)
    a = p.parse_args()
    times = {"railyard-sbr": [], "sbr (reference)": []}
    floor = []
    for i in range(a.rounds):  # interleaved, so drift on the machine hits both alike
        times["railyard-sbr"].append(one_round(a.ours, "railyard-sbr", a.pod))
        times["sbr (reference)"].append(one_round(a.reference, "sbr", a.pod))
        floor.append(exec_floor())
        print(f"\rround {i + 1}/{a.rounds}", end="", flush=True)
    print()
    print(f"{'plugin':<18}{'8-rail ADD+DEL median':>24}{'per rail':>12}{'p10':>10}{'p90':>10}")
    med = {}
    for name, t in times.items():
        t.sort()
        med[name] = statistics.median(t)
        print(f"{name:<18}{med[name]:>21.1f} ms{med[name] / RAILS:>9.2f} ms"
              f"{t[len(t) // 10]:>7.1f} ms{t[len(t) * 9 // 10]:>7.1f} ms")
    ratio = med["sbr (reference)"] / med["railyard-sbr"]
    print(f"ratio: railyard-sbr is {ratio:.1f}x faster end to end (target >= 5x: {'met' if ratio >= 5 else 'MISSED'})")
    # Both pay the runtime's fork+exec of a process 16 times; what is left is the plugins' own work.
    f = statistics.median(floor)
    own = {n: m - f for n, m in med.items()}
    print(f"exec floor: 16 x fork+exec of /bin/true = {f:.1f} ms; without it: railyard-sbr {own['railyard-sbr']:.1f} ms,"
          f" reference {own['sbr (reference)']:.1f} ms, ratio {own['sbr (reference)'] / own['railyard-sbr']:.1f}x")


if __name__ == "__main__":
    main()
