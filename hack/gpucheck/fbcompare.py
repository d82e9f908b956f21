#!/usr/bin/env python3
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
#
# fbcompare.py FACTS SMI_CSV: compares the agent's frame buffer (gpucheck
# --facts: DCGM_FI_DEV_FB_USED, _FREE, _RESERVED in MiB) with nvidia-smi's
# `--query-gpu=uuid,memory.used,memory.reserved,memory.total
# --format=csv,noheader,nounits`, and prints one PASS, FAIL or SKIP line
# per GPU and figure. Memory moves between the two reads, so a figure
# passes within max(8 MiB, 1 %) of nvidia-smi's; used + free + reserved
# must equal nvidia-smi's total within 1 MiB (DCGM's accounting: used
# excludes reserved). Reads only the two files.
import csv
import json
import sys


def number(text):
    try:
        return float(text.strip())
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def line(verdict, name, uuid, detail):
    print(f"{verdict} {name} {uuid}: {detail}")
    return verdict != "FAIL"


def close(a, b):
    return abs(a - b) <= max(8.0, 0.01 * max(abs(b), 1.0))


def compare(fact, row):
    uuid = fact["uuid"]
    used, reserved, total = (number(x) for x in row[1:4])
    ok = True
    if used is None:
        line("SKIP", "fb-used", uuid, "nvidia-smi gives no memory.used")
    else:
        ok &= line("PASS" if close(fact["fbUsedMiB"], used) else "FAIL", "fb-used", uuid,
                   f"DCGM_FI_DEV_FB_USED {fact['fbUsedMiB']:.1f} MiB, nvidia-smi memory.used {used:.0f} MiB")
    if reserved is None or fact["fbReservedMiB"] < 0:
        line("SKIP", "fb-reserved", uuid, f"nvidia-smi memory.reserved {row[2].strip()}, agent {fact['fbReservedMiB']}")
    else:
        ok &= line("PASS" if close(fact["fbReservedMiB"], reserved) else "FAIL", "fb-reserved", uuid,
                   f"DCGM_FI_DEV_FB_RESERVED {fact['fbReservedMiB']:.1f} MiB, nvidia-smi memory.reserved {reserved:.0f} MiB")
    if total is not None and fact["fbReservedMiB"] >= 0:
        s = fact["fbUsedMiB"] + fact["fbFreeMiB"] + fact["fbReservedMiB"]
        ok &= line("PASS" if abs(s - total) <= 1 else "FAIL", "fb-total", uuid,
                   f"used + free + reserved {s:.1f} MiB, nvidia-smi memory.total {total:.0f} MiB")
    return ok


def main(argv):
    if len(argv) != 3:
        print("usage: fbcompare.py FACTS SMI_CSV", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        facts = {x["uuid"]: x for x in json.load(f)}
    ok = True
    seen = set()
    with open(argv[2]) as f:
        for row in csv.reader(f):
            if len(row) < 4:
                continue
            uuid = row[0].strip()
            if uuid not in facts:
                ok &= line("FAIL", "fb-gpu", uuid, "nvidia-smi lists a GPU the agent does not")
                continue
            seen.add(uuid)
            ok &= compare(facts[uuid], row)
    for uuid in sorted(set(facts) - seen):
        ok &= line("FAIL", "fb-gpu", uuid, "the agent lists a GPU nvidia-smi does not")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
