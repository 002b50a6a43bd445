"""A training lane: run chosen runs of a sweep, one after another, on one math thread.

    python tools/lane.py SWEEP_YAML SWEEP_DIR RUN_ID [RUN_ID ...]

Resumable: a run interrupted mid-way resumes from its last checkpoint when the lane is started
again with the same directory. Two lanes must use different sweep directories (a sweep directory
is locked by the process that runs it); export them together with `tools/export_results.py`.
"""
import os, sys
os.environ.setdefault("OMP_NUM_THREADS", "1"); os.environ.setdefault("MKL_NUM_THREADS", "1")
from ssm_mech.sweep import run_sweep

if len(sys.argv) < 4: sys.exit(__doc__)
summary = run_sweep(sys.argv[1], sys.argv[2], cpus_per_run=1, progress=False, only=sys.argv[3:])
print(summary, flush=True)
