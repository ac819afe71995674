#!/usr/bin/env python3
"""The rails lab: a real RDMA stack (soft-RoCE, rdma_rxe) in qemu VMs on a machine without RDMA.

Boots Debian's kernel under qemu (TCG) with a busybox initramfs that mounts the host's root
read-only (virtio-9p + tmpfs overlay), so the host's build and packages run inside. N nodes, R
rails each: rail k of every node is an e1000e NIC behind its own PCIe switch, with
10.(100+k).0.(node+1)/24 and an rxe device `rxe<k>` on it. Two nodes: rail k is a cable (a qemu
UDP socket pair on 127.0.0.1); three or more: rail k is a hub (a qemu multicast socket on
127.0.0.1's loopback, one group per run). Runs a command on every node and returns its output and
exit status.

  lab/lab.py setup                      fetch the kernel, build the initramfs (once)
  lab/lab.py run [--nodes N] [--rails 2] [--numa] [--timeout S] -- COMMAND...
      COMMAND runs on every node (LAB_NODE, LAB_NODES, LAB_RAILS, LAB_PEER: the next node in
      the ring, -1 alone, in its environment);
      prints each node's stdout and stderr, exits with the first non-zero status (124: a node
      did not finish in time).

Packages come from scripts/install-deps.sh; the kernel (linux-image-amd64's current version) is
downloaded with apt-get into the cache (RAILYARD_LAB_CACHE, default /var/cache/railyard-lab).
"""
import argparse
import hashlib
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("RAILYARD_LAB_CACHE", "/var/cache/railyard-lab")
INITRD_MODULES = ["virtio_ring", "virtio", "virtio_pci_legacy_dev", "virtio_pci_modern_dev",
                  "virtio_pci", "netfs", "fscache", "9pnet", "9pnet_virtio", "9p", "overlay"]


def sh(*argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def kernel_version():
    """The versioned image package linux-image-amd64 depends on, and its version string."""
    for attempt in range(2):
        out = subprocess.run(["apt-cache", "depends", "linux-image-amd64"],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("Depends: linux-image-"):
                pkg = line.split()[1]
                return pkg, pkg[len("linux-image-"):]
        if attempt == 0:  # no package lists yet
            sh("apt-get", "update", "-qq")
    raise SystemExit("lab: apt-cache depends linux-image-amd64 names no linux-image-*")


def paths():
    with open(os.path.join(CACHE, "version")) as f:
        version = f.read().strip()
    root = os.path.join(CACHE, "kernel")
    return {"version": version,
            "vmlinuz": os.path.join(root, "boot", "vmlinuz-" + version),
            "modules": os.path.join(root, "lib", "modules", version),
            "initrd": os.path.join(CACHE, "initrd.cpio.gz")}


def initrd_stamp():
    """What the initramfs is made of: rebuilt when init.sh, modprobe.sh or the module list change."""
    h = hashlib.sha256(" ".join(INITRD_MODULES).encode())
    for f in ("init.sh", "modprobe.sh"):
        with open(os.path.join(HERE, f), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def fetch_kernel():
    """The kernel package unpacked into the cache, with the modules.dep it does not ship."""
    pkg, version = kernel_version()
    os.makedirs(CACHE, exist_ok=True)
    work = tempfile.mkdtemp(dir=CACHE)
    try:
        print(f"lab: downloading {pkg}", file=sys.stderr)
        sh("apt-get", "download", "-q", pkg, cwd=work, stdout=subprocess.DEVNULL)
        deb = next(f for f in os.listdir(work) if f.endswith(".deb"))
        root = os.path.join(CACHE, "kernel")
        shutil.rmtree(root, ignore_errors=True)
        sh("dpkg-deb", "-x", os.path.join(work, deb), root)
        sh("depmod", "-b", root, version)
        with open(os.path.join(CACHE, "version"), "w") as f:
            f.write(version + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_initrd(version):
    moddir = os.path.join(CACHE, "kernel", "lib", "modules", version)
    work = tempfile.mkdtemp(dir=CACHE)
    try:
        initrd = os.path.join(work, "initrd")
        for d in ("bin", "sbin", "modules"):
            os.makedirs(os.path.join(initrd, d))
        shutil.copy("/bin/busybox", os.path.join(initrd, "bin", "busybox"))
        shutil.copy(os.path.join(HERE, "init.sh"), os.path.join(initrd, "init"))
        shutil.copy(os.path.join(HERE, "modprobe.sh"), os.path.join(initrd, "sbin", "modprobe"))
        os.chmod(os.path.join(initrd, "init"), 0o755)
        os.chmod(os.path.join(initrd, "sbin", "modprobe"), 0o755)
        found = {}
        for dirpath, _, files in os.walk(moddir):
            for f in files:
                if f.endswith(".ko"):
                    found[f[:-3].replace("-", "_")] = os.path.join(dirpath, f)
        for m in INITRD_MODULES:
            if m not in found:
                raise SystemExit(f"lab: kernel {version} has no module {m}")
            shutil.copy(found[m], os.path.join(initrd, "modules", m + ".ko"))
        files = subprocess.run(["find", "."], cwd=initrd, check=True, capture_output=True).stdout
        cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=initrd, input=files,
                              check=True, capture_output=True).stdout
        gz = subprocess.run(["gzip", "-1"], input=cpio, check=True, capture_output=True).stdout
        with open(os.path.join(CACHE, "initrd.cpio.gz.new"), "wb") as f:
            f.write(gz)
        os.replace(os.path.join(CACHE, "initrd.cpio.gz.new"), os.path.join(CACHE, "initrd.cpio.gz"))
        with open(os.path.join(CACHE, "initrd.stamp"), "w") as f:
            f.write(initrd_stamp() + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def setup(_args):
    """Idempotent: the kernel once per version, the initramfs whenever what it holds changed."""
    if not os.path.exists(os.path.join(CACHE, "version")):
        fetch_kernel()
    version = paths()["version"]
    stamp = os.path.join(CACHE, "initrd.stamp")
    if not os.path.exists(stamp) or open(stamp).read().strip() != initrd_stamp():
        build_initrd(version)
        print(f"lab: ready ({version}, {CACHE})", file=sys.stderr)
    return 0


def free_ports(n):
    """n UDP ports on 127.0.0.1 that nothing holds now."""
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


NODE_SCRIPT = r"""#!/bin/sh
# Written by lab.py: the rails up, then the command.
export LAB_NODE={node} LAB_NODES={nodes} LAB_RAILS={rails} LAB_PEER={peer}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
# No udev: drivers by modalias.
for a in /sys/bus/pci/devices/*/modalias; do modprobe -q -a "$(cat "$a")" 2>/dev/null; done
modprobe rdma_rxe
modprobe rdma_ucm  # /dev/infiniband/rdma_cm, as rdma-core's rules load it on a real node
# e1000e netdevs by PCI address: rail k is the k-th.
k=0
for d in $(ls -d /sys/bus/pci/drivers/e1000e/0000:* 2>/dev/null | sort); do
  ifc=$(ls "$d/net")
  ip addr add 10.$((100 + k)).0.$((LAB_NODE + 1))/24 dev "$ifc"
  ip link set "$ifc" up
  rdma link add rxe$k type rxe netdev "$ifc"
  k=$((k + 1))
done
[ "$k" = "$LAB_RAILS" ] || {{ echo "lab: $k rails came up, $LAB_RAILS expected" >&2; exit 125; }}
# e1000e ports take 1-3 s to reach ACTIVE.
i=0
while [ $i -lt 100 ]; do
  n=0
  for p in /sys/class/infiniband/rxe*/ports/1/state; do
    grep -q ACTIVE "$p" && n=$((n + 1))
  done
  [ "$n" = "$LAB_RAILS" ] && break
  sleep 0.1
  i=$((i + 1))
done
[ "$n" = "$LAB_RAILS" ] || {{ echo "lab: rxe ports not ACTIVE after 10 s" >&2; exit 125; }}
cd {cwd}
{command}
"""


MAX_NODES = 4  # each node is a TCG vCPU: more than this only queue for the host's cores


def rail_netdev(k, node, nodes, ports, group):
    """Rail k's link: a point-to-point cable between two nodes, a hub among more.

    Cables are a UDP socket pair on 127.0.0.1 (TCP mode adds ~22 ms per round trip). A hub is a
    multicast group joined on 127.0.0.1 (IP_MULTICAST_IF there: the frames stay on loopback),
    qemu's documented way to put several VMs on one segment; every frame reaches every node and
    each NIC keeps what is addressed to it.
    """
    if nodes == 2:
        mine, theirs = ports[2 * k + node], ports[2 * k + (1 - node)]
        return f"socket,id=r{k},udp=127.0.0.1:{theirs},localaddr=127.0.0.1:{mine}"
    return f"socket,id=r{k},mcast={group}:{ports[k]},localaddr=127.0.0.1"


def qemu_argv(p, job, node, nodes, rails, ports, group, numa):
    argv = ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-smp", "1", "-m", "384",
            "-M", "q35", "-nographic", "-no-reboot", "-nodefaults",
            "-kernel", p["vmlinuz"], "-initrd", p["initrd"],
            "-append", f"console=ttyS0 quiet panic=-1 lab.node={node}",
            "-serial", f"file:{job}/node{node}.console",
            # multidevs=remap: the host's /proc, /sys, ... are separate filesystems whose inode
            # numbers collide over 9p, and the guest's own /proc would land on its /sys.
            "-virtfs",
            "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
            "-virtfs", f"local,path={job},mount_tag=job,security_model=none"]
    if numa:
        # Two NUMA nodes, each with a host bridge of its own (pxb-pcie; pcie.0 has no NUMA node
        # in ACPI): the first half of the rails on node 0's, the second half on node 1's.
        argv += ["-object", "memory-backend-ram,id=m0,size=192M",
                 "-object", "memory-backend-ram,id=m1,size=192M",
                 "-numa", "node,nodeid=0,cpus=0,memdev=m0", "-numa", "node,nodeid=1,memdev=m1",
                 "-device", "pxb-pcie,id=pxb0,bus_nr=64,numa_node=0,bus=pcie.0",
                 "-device", "pxb-pcie,id=pxb1,bus_nr=128,numa_node=1,bus=pcie.0"]
    for k in range(rails):
        root = ("pxb1" if k >= (rails + 1) // 2 else "pxb0") if numa else "pcie.0"
        argv += ["-netdev", rail_netdev(k, node, nodes, ports, group),
                 "-device", f"pcie-root-port,id=rp{k},bus={root},chassis={k + 1},slot={k + 1}",
                 "-device", f"x3130-upstream,id=up{k},bus=rp{k}",
                 "-device", f"xio3130-downstream,id=dn{k},bus=up{k},chassis={k + 20},slot=0",
                 "-device", f"e1000e,netdev=r{k},bus=dn{k},mac=52:54:00:{node:02x}:{k:02x}:01"]
    return argv


def run(args):
    setup(args)
    p = paths()
    if not 1 <= args.nodes <= MAX_NODES:
        raise SystemExit(f"lab: --nodes is 1 to {MAX_NODES} (one TCG vCPU each)")
    command = " ".join(args.command) if args.command else "true"
    job = tempfile.mkdtemp(prefix="railyard-lab-")
    try:
        with open(os.path.join(job, "modules.path"), "w") as f:
            f.write(p["modules"] + "\n")
        ports = free_ports(2 * args.rails)
        # A multicast group of this run's own, so that two labs at once do not share a hub.
        group = f"239.255.{random.randrange(256)}.{random.randrange(1, 255)}"
        for n in range(args.nodes):
            with open(os.path.join(job, f"node{n}.sh"), "w") as f:
                f.write(NODE_SCRIPT.format(node=n, nodes=args.nodes, rails=args.rails,
                                           peer=(n + 1) % args.nodes if args.nodes > 1 else -1,
                                           cwd=os.getcwd(), command=command))
        procs = [subprocess.Popen(qemu_argv(p, job, n, args.nodes, args.rails, ports, group,
                                            args.numa),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
                 for n in range(args.nodes)]
        deadline = time.monotonic() + args.timeout
        timed_out = False
        for proc in procs:
            try:
                proc.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        status = 0
        for n in range(args.nodes):
            def read(name):
                path = os.path.join(job, f"node{n}.{name}")
                return open(path, errors="replace").read() if os.path.exists(path) else None
            out, err, st = read("out"), read("err"), read("status")
            tag = f"[lab{n}] " if args.nodes > 1 else ""
            for line in (out or "").splitlines():
                print(tag + line)
            for line in (err or "").splitlines():
                print(tag + line, file=sys.stderr)
            if st is None:
                print(f"lab: node {n} did not finish" + (" in time" if timed_out else "") +
                      "; console:\n" + (read("console") or "")[-3000:], file=sys.stderr)
                code = 124
            else:
                code = int(st.strip() or "1")
            if status == 0 and code != 0:
                status = code
        return status
    finally:
        if args.keep:
            print(f"lab: job directory kept: {job}", file=sys.stderr)
        else:
            shutil.rmtree(job, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("setup", help="fetch the kernel and build the initramfs")
    r = sub.add_parser("run", help="boot the nodes and run COMMAND on each")
    r.add_argument("--nodes", type=int, default=1)
    r.add_argument("--rails", type=int, default=2)
    r.add_argument("--timeout", type=float, default=300)
    r.add_argument("--keep", action="store_true", help="keep the job directory (consoles)")
    r.add_argument("--numa", action="store_true",
                   help="two NUMA nodes, the second half of the rails on node 1's host bridge")
    r.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.cmd == "setup":
        return setup(args)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
