"""Time `ssm-mech report-card --scale ci` end to end for a mixer of attention's cost, given by import path.

Runs the console entry point in a child process with OMP_NUM_THREADS=MKL_NUM_THREADS=2 (the CI runner's
two cores), records the wall time and the machine's load average before and after, and prints a
markdown row for benchmarks/RESULTS.md: wall time, the child's CPU time (user + system, both threads),
the load average. Target: at most 180 seconds of wall time on the otherwise idle 2-core CPU.
Run: python benchmarks/report_card.py [MODULE:CLASS]
"""
import os, resource, subprocess, sys, tempfile, time
from pathlib import Path

mixer = sys.argv[1] if len(sys.argv) > 1 else "ssm_mech.mixers:MHA"
root = Path(__file__).resolve().parents[1]
env = {**os.environ, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "MPLBACKEND": "Agg",
       "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
with tempfile.TemporaryDirectory() as d:
    load0 = os.getloadavg()[0]; t0 = time.time()
    r = subprocess.run([sys.executable, "-c", "import sys; from ssm_mech.cli import main; sys.exit(main(sys.argv[1:]))",
                        "report-card", mixer, "--scale", "ci", "--out", str(Path(d) / "card"), "--no-progress",
                        "--results", str(root / "results")], env=env, capture_output=True, text=True)
    secs, load1 = time.time() - t0, os.getloadavg()[0]
    ru = resource.getrusage(resource.RUSAGE_CHILDREN); cpu = ru.ru_utime + ru.ru_stime   # CPU seconds of the child, both threads
    print(r.stdout[-2000:], r.stderr[-2000:] if r.returncode else "")
    ok = r.returncode == 0 and (Path(d) / "card" / "report.html").exists()
print(f"| `{mixer}` | ci | 2 | {secs:.0f} s | {cpu:.0f} s | {'yes' if secs <= 180 else 'no'} | {load0:.1f} → {load1:.1f} | {'ok' if ok else 'FAILED'} |")
