"""Driver for run.sh: runs each tool per rail count and round, prints medians and ratios."""
import argparse
import json
import os
import statistics
import subprocess

MIN, MAX, ITERS = 1 << 20, 64 << 20, 10


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True, **kw).stdout


def size_lines(text):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            out[int(parts[0])] = float(parts[1])
    return out


def railyard(a, b, rails, port, binary_dir, plot):
    args = f"allreduce --world-size 2 --rendezvous 10.77.0.1:{port} --rails {rails} -b {MIN} -e {MAX} -f 4 -n {ITERS} -w 2 -c 0"
    peer = subprocess.Popen(f"ip netns exec {b} {binary_dir}/railyard-bench --rank 1 {args}", shell=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = sh(f"ip netns exec {a} {binary_dir}/railyard-bench --rank 0 {args} --plot {plot}")
    peer.wait()
    parsed = json.loads(subprocess.run([f"{binary_dir}/railyard-validate", "parse", "-"], input=out, text=True,
                                       capture_output=True, check=True).stdout)
    return {r["size"]: r["in_place"]["busbw"] for r in parsed["rows"]}


def mpi(a, work, rails):
    return size_lines(sh(f"ip netns exec {a} mpirun --allow-run-as-root --mca plm_rsh_agent {work}/nsrsh "
                         f"--mca btl tcp,self --mca btl_tcp_if_include {rails} --mca oob_tcp_if_include rail0 "
                         f"--host 10.77.0.1,10.77.0.2 -np 2 {work}/mpi_allreduce {MIN} {MAX} {ITERS}"))


def gloo(a, b, work, round_):
    store = os.path.join(work, f"gloo-store-{round_}")
    os.makedirs(store)
    args = f"{store} rail0 {MIN} {MAX} {ITERS}"
    peer = subprocess.Popen(f"ip netns exec {b} {work}/gloo_allreduce 1 2 {args}", shell=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = sh(f"ip netns exec {a} {work}/gloo_allreduce 0 2 {args}")
    peer.wait()
    return size_lines(out)


RAIL_PEER = {"rail0": "10.77.0.2", "rail1": "10.78.0.2"}  # namespace b's address on each rail


def iperf(a, b, port, rails=("rail0",), bidir=False):
    """GB/s per direction over `rails` at once, one TCP stream on each (with bidir, one each way
    at once: an allreduce sends and receives at once, so on a shared-CPU machine this is its
    ceiling on the same rails)."""
    ports = [port + 1000 * i for i in range(len(rails))]
    servers = [subprocess.Popen(f"exec ip netns exec {b} iperf3 -s -1 -p {p}", shell=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for p in ports]
    try:
        # Start the clients once the servers listen (ss shows them), so one client meets one server.
        for _ in range(500):
            listening = sh(f"ip netns exec {b} ss -Hltn")
            if all(f":{p} " in listening for p in ports):
                break
            if any(s.poll() is not None for s in servers):
                raise RuntimeError(f"iperf3 -s on ports {ports} exited")
        clients = [subprocess.Popen(f"ip netns exec {a} iperf3 -c {RAIL_PEER[r]} -p {p} -t 3 -J"
                                    + (" --bidir" if bidir else ""), shell=True, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                   for r, p in zip(rails, ports)]
        outs = []
        for c in clients:
            out, err = c.communicate()
            if c.returncode != 0:
                raise RuntimeError(f"iperf3 -c failed: {out[-500:]} {err[-500:]}")
            outs.append(out)
        for s in servers:
            s.wait(timeout=30)
    finally:
        for s in servers:
            if s.poll() is None:
                s.kill()
    total = 0.0
    for out in outs:
        end = json.loads(out)["end"]
        if bidir:
            total += (end["sum_received"]["bits_per_second"]
                      + end["sum_received_bidir_reverse"]["bits_per_second"]) / 16e9
        else:
            total += end["sum_received"]["bits_per_second"] / 8e9
    return total


def reduce_rate(binary_dir):
    """GB/s of float sums on one core (railyard-bench reduce, 32 MiB): the reduction's CPU cost."""
    out = sh(f"{binary_dir}/railyard-bench reduce -d float -b 32M -e 32M -n 20 -w 3")
    rows = [line.split() for line in out.splitlines() if line.strip() and line.split()[0].isdigit()]
    return float(rows[-1][3])


def main():
    p = argparse.ArgumentParser()
    for k in ("a", "b", "work", "bin"):
        p.add_argument(f"--{k}", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--plots", default=None, help="folder for railyard-bench's busbw plots (last round)")
    a = p.parse_args()
    results = {}
    iperf_runs, bidir_runs = [], {1: [], 2: []}
    rate = reduce_rate(a.bin)
    for rnd in range(a.rounds):
        for rails, ifs in ((1, "rail0"), (2, "rail0,rail1")):
            plot = os.path.join(a.plots or a.work, f"railyard-{rails}rail{'s' if rails > 1 else ''}.svg")
            results.setdefault((rails, "railyard-bench"), []).append(
                railyard(a.a, a.b, ifs, 29600 + rnd * 2 + rails, a.bin, plot))
            # --bidir right after railyard-bench, so each round's pair sees the machine alike.
            bidir_runs[rails].append(iperf(a.a, a.b, 5401 + 10 * rnd + rails, ifs.split(","), bidir=True))
            results.setdefault((rails, "OpenMPI"), []).append(mpi(a.a, a.work, ifs))
            if rails == 1:
                results.setdefault((rails, "Gloo"), []).append(gloo(a.a, a.b, a.work, rnd))
        iperf_runs.append(iperf(a.a, a.b, 5301 + rnd))
    print()
    if a.plots:
        print(f"busbw per size and rail (last round): {a.plots}/railyard-1rail.svg, railyard-2rails.svg")
    ip = statistics.median(iperf_runs)
    print(f"iperf3, one TCP stream on rail0 (the physical reference): {ip:.2f} GB/s (median of {len(iperf_runs)})")
    print(f"the reduction alone (railyard-bench reduce, float, 32 MiB, one core): {rate:.2f} GB/s")
    for rails in (1, 2):
        bd = statistics.median(bidir_runs[rails])
        # The floor of these machines: 2 shared cores. iperf3 --bidir keeps both busy moving bytes;
        # an allreduce of S bytes between 2 ranks moves S each way AND sums S (half per rank), on
        # the same cores. Its ceiling here is therefore 1 / (1/bidir + 1/(2 x reduce rate)).
        ceiling = 1 / (1 / bd + 1 / (2 * rate))
        tools = [t for (r, t) in results if r == rails]
        med = {t: {s: statistics.median(run[s] for run in results[(rails, t)]) for s in results[(rails, t)][0]} for t in tools}
        print(f"\n{rails} rail{'s' if rails > 1 else ''}: busbw in GB/s, medians of {a.rounds} rounds"
              + ("" if rails == 1 else " (Gloo has one TCP device: not run)"))
        print(f"iperf3 --bidir on the same rail{'s' if rails > 1 else ''}, one stream each way per rail, per direction:"
              f" {bd:.2f} GB/s; floor of 2 shared cores (--bidir plus the reduction's CPU time):"
              f" ceiling {ceiling:.2f} GB/s = {ceiling / bd:.2f}x of --bidir")
        header = f"{'size':>10}" + "".join(f"{t:>16}" for t in tools) + f"{'vs OpenMPI':>12}" + \
            (f"{'vs Gloo':>10}" if "Gloo" in tools else "") + f"{'vs iperf3':>11}" + f"{'vs bidir':>10}"
        print(header)
        for s in sorted(med["railyard-bench"]):
            ours = med["railyard-bench"][s]
            line = f"{s:>10}" + "".join(f"{med[t].get(s, float('nan')):>16.2f}" for t in tools)
            line += f"{ours / med['OpenMPI'][s]:>11.2f}x"
            if "Gloo" in tools:
                line += f"{ours / med['Gloo'][s]:>9.2f}x"
            line += f"{ours / ip:>10.2f}x"
            line += f"{ours / bd:>9.2f}x"
            print(line)
        big = [s for s in med["railyard-bench"] if s >= 16 << 20]
        vs_mpi = min(med["railyard-bench"][s] / med["OpenMPI"][s] for s in big)
        vs_ip = min(med["railyard-bench"][s] / ip for s in big)
        vs_bd = min(med["railyard-bench"][s] / bd for s in big)
        vs_ceiling = min(med["railyard-bench"][s] / ceiling for s in big)
        print(f"targets at >= 16 MiB: >= 1.3x OpenMPI: {'met' if vs_mpi >= 1.3 else 'MISSED'} ({vs_mpi:.2f}x worst);"
              f" >= 0.8x iperf3: {'met' if vs_ip >= 0.8 else 'MISSED'} ({vs_ip:.2f}x worst)")
        # This machine's speed drifts within a run: the ratio of each round's back-to-back pair shows
        # how much of the spread is the machine's rather than either tool's.
        worst = min(big, key=lambda s: med["railyard-bench"][s] / bd)
        paired = [run[worst] / b for run, b in zip(results[(rails, "railyard-bench")], bidir_runs[rails])]
        print(f"  each round's railyard-bench / --bidir, measured back to back ({worst >> 20} MiB):"
              f" median {statistics.median(paired):.2f}x, range {min(paired):.2f}-{max(paired):.2f}x")
        print(f"  >= 0.9x iperf3 --bidir per direction: {'met' if vs_bd >= 0.9 else 'MISSED'} ({vs_bd:.2f}x worst);"
              f" above the floor, >= 0.9x of the ceiling: {'met' if vs_ceiling >= 0.9 else 'MISSED'}"
              f" ({vs_ceiling:.2f}x worst)")


if __name__ == "__main__":
    main()
