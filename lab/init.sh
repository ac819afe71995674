#!/bin/busybox sh
# PID 1 of a lab VM (busybox, in the initramfs): the host's root read-only over virtio-9p with a
# tmpfs overlay, so the host's build and packages run inside; the kernel's modules bound on
# /lib/modules; then /lab/job/node<N>.sh run in that root, its stdout, stderr and exit status
# written back through the writable 9p share, and power off.
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /lower /upper /newroot /job
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache \
         9pnet 9pnet_virtio 9p overlay; do
  insmod /modules/$m.ko 2>/dev/null
done
node=$(sed -n 's/.*lab.node=\([0-9]*\).*/\1/p' /proc/cmdline)
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose hostroot /lower || exec poweroff -f
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 job /job || exec poweroff -f
mount -t tmpfs -o size=200m tmpfs /upper
mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /newroot
# /tmp stays the host's (writes land in the overlay): a checkout or build under /tmp runs too.
for d in proc sys dev run lab; do mkdir -p /newroot/$d; done
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mount -t tmpfs tmpfs /newroot/run
mount --bind /job /newroot/lab
kver=$(uname -r)
mkdir -p /newroot/lib/modules/$kver
mount --bind "/newroot$(cat /job/modules.path)" /newroot/lib/modules/$kver
chroot /newroot /bin/sh -c "hostname lab$node; ip link set lo up"
chroot /newroot /bin/sh -c "cd / && exec /bin/sh /lab/node$node.sh" \
  >/job/node$node.out 2>/job/node$node.err
echo $? >/job/node$node.status
sync
poweroff -f
