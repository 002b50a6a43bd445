"""Copy sweep folders' results (no checkpoints) into results/<name>/: `python tools/export_results.py SWEEP_DIR [SWEEP_DIR ...] RESULTS_DIR [--merge]` (see `ssm_mech.publish.export_sweep`)."""
from ssm_mech.publish import export_main
raise SystemExit(export_main())
