#!/usr/bin/env python3
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
#
# metricscompare.py SCRAPE SMI_CSV LABEL: compares the agent's DCGM
# series in SCRAPE (gpucheck's output: one scrape of /metrics, lines
# `DCGM_FI_DEV_GPU_UTIL{...,UUID="GPU-...",...} 96`) with nvidia-smi's
# `--query-gpu=uuid,utilization.gpu,power.draw,temperature.gpu
# --format=csv,noheader,nounits`, read while the same load ran, and prints
# one PASS, FAIL or SKIP line per GPU and field, named
# metrics-LABEL-<field>. The two are sampled at different instants, so a
# figure passes within a tolerance: utilization 20 points, power
# max(15 W, 15 %), temperature 5 C. Under LABEL "load" the agent's
# utilization must also be over 50 % (the load ran). Reads only the
# two files; exit 0 unless a line is FAIL.
import csv
import re
import sys

SERIES = re.compile(r'^(DCGM_FI_DEV_[A-Z_]+)\{([^}]*)\}\s+(\S+)$')
UUID = re.compile(r'UUID="([^"]+)"')
FIELDS = [  # (name, series, nvidia-smi column, within(agent, smi))
    ("util", "DCGM_FI_DEV_GPU_UTIL", 1, lambda a, s: abs(a - s) <= 20),
    ("power", "DCGM_FI_DEV_POWER_USAGE", 2, lambda a, s: abs(a - s) <= max(15.0, 0.15 * s)),
    ("temp", "DCGM_FI_DEV_GPU_TEMP", 3, lambda a, s: abs(a - s) <= 5),
]


def number(text):
    try:
        return float(text.strip())
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def agent_series(path):
    """Whole-GPU series by (name, UUID): a MIG device's carry GPU_I_ID."""
    out = {}
    with open(path) as f:
        for raw in f:
            m = SERIES.match(raw.strip())
            if not m or 'GPU_I_ID="' in m.group(2):
                continue
            u = UUID.search(m.group(2))
            if u:
                out[(m.group(1), u.group(1))] = float(m.group(3))
    return out


def main(argv):
    if len(argv) != 4:
        print("usage: metricscompare.py SCRAPE SMI_CSV LABEL", file=sys.stderr)
        return 2
    agent, label, ok = agent_series(argv[1]), argv[3], True
    with open(argv[2]) as f:
        rows = [r for r in csv.reader(f) if r]
    if not rows:
        print(f"SKIP metrics-{label}: nvidia-smi listed no GPU")
    for row in rows:
        uuid = row[0].strip()
        for name, series, col, within in FIELDS:
            a, s = agent.get((series, uuid)), number(row[col]) if len(row) > col else None
            what = f"metrics-{label}-{name} {uuid}"
            if a is None or s is None:
                print(f"SKIP {what}: agent {a}, nvidia-smi {s}")
                continue
            good = within(a, s) and not (label == "load" and name == "util" and a <= 50)
            ok = ok and good
            print(f"{'PASS' if good else 'FAIL'} {what}: agent {a:g}, nvidia-smi {s:g}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
