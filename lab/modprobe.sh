#!/bin/busybox sh
# The kernel's request_module runs /sbin/modprobe in the initramfs' root; the real one, its
# modules.dep and the kernel's modules live in the new root.
exec chroot /newroot /sbin/modprobe "$@"
