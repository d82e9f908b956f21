#!/usr/bin/env python3
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
"""Check that a CDI spec's edits alone let a process initialise CUDA.

    unshare -m --propagation private python3 cdi_cuinit.py SPEC.json

Run as root in a fresh, private mount namespace (unshare -m), it applies
the edits of the spec's one device and of the spec (the CDI library's
order: the device's, then the spec's) the way a runtime would, within
this namespace only:

  * /dev becomes a tmpfs holding only the spec's device nodes (bound from
    their host paths) and the nodes every OCI runtime gives a container
    (null, zero, full, random, urandom);
  * each mount is bound at its container path under a fresh tmpfs root R;
  * the create-symlinks hook's links (--link TARGET::LINK) are made under
    R, the update-ldcache hook's folders (--folder) become
    LD_LIBRARY_PATH under R (instead of a container's ldconfig), and the
    disable-device-node-modification hook's edit is made (a copy of
    /proc/driver/nvidia/params with ModifyDeviceFiles: 0 bound over it);

then a child python3 loads libcuda.so.1 through that path only, calls
cuInit(0) and cuDriverGetVersion, and lists the NVIDIA libraries it
mapped. It prints one line:

  PASS cdi-cuinit: cuInit(0) = 0 ...  every NVIDIA library from the spec
  FAIL cdi-cuinit: ...                 a non-zero CUDA result, a library
                                       mapped from outside the spec's
                                       mounts, or an edit that fails

and exits 0 (PASS) or 1. It changes nothing outside the namespace.
"""
import json
import os
import subprocess
import sys
import tempfile

RUNTIME_NODES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
PARAMS = "/proc/driver/nvidia/params"

CHILD = r"""
import ctypes, json, os
root = os.environ["CDI_CUINIT_ROOT"]
lib = ctypes.CDLL("libcuda.so.1")
rc = lib.cuInit(0)
v = ctypes.c_int(0)
vrc = lib.cuDriverGetVersion(ctypes.byref(v))
libs = set()
with open("/proc/self/maps") as f:
    for line in f:
        p = line.split()[-1]
        base = os.path.basename(p)
        if base.startswith("libcuda") or base.startswith("libnvidia"):
            libs.add(p)
print(json.dumps({"rc": rc, "versionRc": vrc, "version": v.value,
                  "libs": sorted(libs), "outside": sorted(p for p in libs if not p.startswith(root + "/"))}))
"""


def merged_edits(spec):
    """The device's edits, then the spec's: the spec must hold one device."""
    devs = spec.get("devices") or []
    if len(devs) != 1:
        raise ValueError("want a spec of one device, got %d" % len(devs))
    out = {"deviceNodes": [], "mounts": [], "hooks": [], "env": []}
    for e in (devs[0].get("containerEdits") or {}, spec.get("containerEdits") or {}):
        for k in out:
            out[k] += e.get(k) or []
    return out


def mount(*args):
    subprocess.run(["mount", *args], check=True, stdout=subprocess.DEVNULL)


def touch(path, is_dir):
    if is_dir:
        os.makedirs(path, exist_ok=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "a").close()


def hook_args(hooks, name, flag):
    """The values of flag in the hooks named name (args[1])."""
    out = []
    for h in hooks:
        a = h.get("args") or []
        if len(a) > 1 and a[1] == name:
            out += [a[i + 1] for i in range(len(a) - 1) if a[i] == flag]
    return out


def has_hook(hooks, name):
    return any(len(h.get("args") or []) > 1 and h["args"][1] == name for h in hooks)


def apply(e, root):
    """Applies the edits e under root and to /dev; returns the library
    folders for LD_LIBRARY_PATH."""
    dev = os.path.join(root, "dev")
    os.mkdir(dev)
    mount("-t", "tmpfs", "tmpfs", dev)
    nodes = [(n.get("hostPath") or n["path"], n["path"]) for n in e["deviceNodes"]]
    nodes += [(p, p) for p in RUNTIME_NODES if os.path.exists(p)]
    for host, path in nodes:
        target = dev + path[len("/dev"):]
        touch(target, False)
        mount("--bind", host, target)
    for m in e["mounts"]:
        target = root + m["containerPath"]
        touch(target, os.path.isdir(m["hostPath"]))
        mount("--bind", m["hostPath"], target)
    for link in hook_args(e["hooks"], "create-symlinks", "--link"):
        target, name = link.split("::", 1)
        os.makedirs(os.path.dirname(root + name), exist_ok=True)
        if not os.path.lexists(root + name):
            os.symlink(target, root + name)
    if has_hook(e["hooks"], "disable-device-node-modification") and os.path.exists(PARAMS):
        with open(PARAMS) as f:
            lines = [("ModifyDeviceFiles: 0" if l.startswith("ModifyDeviceFiles:") else l.rstrip("\n")) for l in f]
        copy = os.path.join(root, "params")
        with open(copy, "w") as f:
            f.write("\n".join(lines) + "\n")
        mount("--bind", copy, PARAMS)
    mount("--move", dev, "/dev")
    return [root + f for f in hook_args(e["hooks"], "update-ldcache", "--folder")]


def main(argv):
    if len(argv) != 2:
        print("usage: unshare -m --propagation private python3 cdi_cuinit.py SPEC.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            e = merged_edits(json.load(f))
        root = tempfile.mkdtemp(prefix="cdi-cuinit.")
        mount("-t", "tmpfs", "tmpfs", root)
        folders = apply(e, root)
    except (OSError, ValueError, subprocess.CalledProcessError) as err:
        print("FAIL cdi-cuinit: applying the spec's edits: %s" % err)
        return 1
    if not folders:
        print("FAIL cdi-cuinit: the spec has no update-ldcache hook: no library folder")
        return 1
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LD_LIBRARY_PATH": ":".join(folders), "CDI_CUINIT_ROOT": root}
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        print("FAIL cdi-cuinit: the child exited %d: %s" % (p.returncode, p.stderr.strip().splitlines()[-1:] or ""))
        return 1
    r = json.loads(p.stdout)
    ok = r["rc"] == 0 and r["versionRc"] == 0 and r["libs"] and not r["outside"]
    print("%s cdi-cuinit: cuInit(0) = %d, cuDriverGetVersion = %d, %d NVIDIA libraries mapped, from outside the spec: %s; %d device nodes, %d mounts" % (
        "PASS" if ok else "FAIL", r["rc"], r["version"], len(r["libs"]), r["outside"] or "none", len(e["deviceNodes"]), len(e["mounts"])))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
