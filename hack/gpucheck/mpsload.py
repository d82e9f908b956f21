#!/usr/bin/env python3
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
#
# mpsload.py matmul SECONDS | alloc GIB: one CUDA client for gpucheck's
# MPS share check, run under a share's environment (its MPS pipe
# directory, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE,
# CUDA_MPS_PINNED_DEVICE_MEM_LIMIT) or none. Prints one JSON line:
#
#   matmul: {"tflops": T}   bf16 8192 x 8192 matmuls for SECONDS seconds
#                           (2 * 8192^3 flops each)
#   alloc:  {"allocated": true|false, "error": "..."}   GIB GiB on the GPU
#
# Exit 3 without torch or a CUDA device.
import json
import sys
import time


def main(argv):
    if len(argv) != 3 or argv[1] not in ("matmul", "alloc"):
        print("usage: mpsload.py matmul SECONDS | alloc GIB", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print(json.dumps({"error": "torch is not installed"}))
        return 3
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch sees no CUDA device"}))
        return 3
    arg = float(argv[2])
    if argv[1] == "alloc":
        try:
            x = torch.empty(int(arg * 2**30), dtype=torch.uint8, device="cuda")
            x.fill_(1)
            torch.cuda.synchronize()
            print(json.dumps({"allocated": True}))
        except RuntimeError as e:  # torch.cuda.OutOfMemoryError is one
            print(json.dumps({"allocated": False, "error": str(e).splitlines()[0]}))
        return 0
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = a.clone()
    torch.cuda.synchronize()
    done, start = 0, time.monotonic()
    while time.monotonic() - start < arg:
        for _ in range(8):
            a @ b
        torch.cuda.synchronize()
        done += 8
    elapsed = time.monotonic() - start
    print(json.dumps({"tflops": 2 * n**3 * done / elapsed / 1e12}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
