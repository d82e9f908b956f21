#!/usr/bin/env python3
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
#
# cudaload.py SECONDS: a bf16 matmul load on every GPU torch sees, for
# SECONDS seconds (8192 x 8192 operands, launched in turn on each GPU and
# synchronised every 16 rounds, so that every GPU stays busy). Prints
# "cudaload: N GPUs, R rounds in S s" at the end. Exit 3 without torch or
# without a CUDA device (hack/gpu-check.sh then prints a SKIP line).
import sys
import time


def main(argv):
    seconds = float(argv[1]) if len(argv) > 1 else 20.0
    try:
        import torch
    except ImportError:
        print("cudaload: torch is not installed")
        return 3
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        print("cudaload: torch sees no CUDA device")
        return 3
    n = torch.cuda.device_count()
    ops = []
    for d in range(n):
        a = torch.randn(8192, 8192, device=f"cuda:{d}", dtype=torch.bfloat16)
        ops.append((a, a.clone()))
    end, rounds = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        for a, b in ops:
            a @ b
        rounds += 1
        if rounds % 16 == 0:
            for d in range(n):
                torch.cuda.synchronize(d)
    for d in range(n):
        torch.cuda.synchronize(d)
    print(f"cudaload: {n} GPUs, {rounds} rounds in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
