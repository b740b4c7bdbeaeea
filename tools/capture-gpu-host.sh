#!/usr/bin/env bash
# Read-only capture of what a real NVIDIA GPU host shows in sysfs and nvidia-smi, to turn into a lab
# description. Never writes to sysfs, never changes GPU settings. Usage: capture-gpu-host.sh OUTDIR
set -u
out=${1:?usage: capture-gpu-host.sh OUTDIR}
mkdir -p "$out"
run() { local name=$1; shift; { echo "\$ $*"; "$@"; echo "rc=$?"; } >"$out/$name.txt" 2>&1; }
run uname uname -a
run lspci-Dnnk lspci -D -nn -k
run lspci-vvv lspci -D -nn -vvv
run lspci-vmm lspci -D -vmm -nn
run smi-L nvidia-smi -L
run smi-q nvidia-smi -q
run smi-query nvidia-smi --query-gpu=index,pci.bus_id,name,uuid,serial,mig.mode.current,mig.mode.pending,memory.total,driver_version,vbios_version --format=csv
run smi-query-nounits nvidia-smi --query-gpu=index,pci.bus_id,name,mig.mode.current,mig.mode.pending --format=csv,noheader
run smi-mig-lgi nvidia-smi mig -lgi
run smi-mig-lgip nvidia-smi mig -lgip
run smi-mig-lci nvidia-smi mig -lci
run smi-vgpu nvidia-smi vgpu
run smi-vgpu-s nvidia-smi vgpu -s
run smi-vgpu-c nvidia-smi vgpu -c
run smi-topo nvidia-smi topo -m
run smi-help-query nvidia-smi --help-query-gpu
run ls-mdev ls -la /sys/class/mdev_bus/
run ls-iommu ls /sys/kernel/iommu_groups/
run ls-vfio ls -la /dev/vfio/
run ls-libvirt ls -la /run/libvirt/qemu/
# every NVIDIA PCI function: all readable regular attributes (small ones) and links
for d in /sys/bus/pci/devices/*; do
  [ "$(cat "$d/vendor" 2>/dev/null)" = "0x10de" ] || continue
  bdf=$(basename "$d")
  f="$out/sysfs-$bdf.txt"
  {
    echo "# $d"
    ls -la "$d/"
    for a in "$d"/*; do
      n=$(basename "$a")
      case "$n" in config|rom|resource[0-9]*|remove|rescan|reset|reset_method|*bind|new_id|remove_id) continue;; esac
      if [ -L "$a" ]; then echo "$n -> $(readlink "$a")"
      elif [ -f "$a" ] && [ -r "$a" ]; then printf '%s = ' "$n"; timeout 2 head -c 2000 "$a" 2>&1 | tr '\n' '|'; echo
      fi
    done
    echo "## config header (64 bytes)"; timeout 2 od -An -tx1 -N64 "$d/config"
    [ -d "$d/nvidia" ] && { echo "## nvidia/"; ls -la "$d/nvidia"; for a in "$d"/nvidia/*; do printf '%s = ' "$(basename "$a")"; timeout 2 head -c 4000 "$a" 2>&1 | tr '\n' '|'; echo; done; }
    [ -d "$d/mdev_supported_types" ] && { echo "## mdev types"; ls "$d/mdev_supported_types"; }
    ig=$(readlink "$d/iommu_group"); [ -n "$ig" ] && { echo "## iommu group members"; ls "$d/iommu_group/devices"; }
  } >"$f" 2>&1
done
echo "capture done"
