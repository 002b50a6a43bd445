"""Write each results folder's README.md from its data: `python tools/sweep_readme.py RESULTS_DIR [RESULTS_DIR ...]` (see `ssm_mech.publish.readme_text`)."""
from ssm_mech.publish import readme_main
raise SystemExit(readme_main())
