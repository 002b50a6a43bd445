"""Mechanistic evaluation of Transformers and state space models: train small sequence models on in-context retrieval tasks and dissect how they solve them with interchange interventions.

Modules:

- `ssm_mech.modern`: Five mixers from 2023–2025 beyond the paper's zoo, each in readable PyTorch from its paper: Gated DeltaNet, RetNet's multi-scale retention, RWKV-7, HGRN2 and the Forgetting Transformer, with named hook points, a step form equal to the parallel one, and fla's reference loops as independent oracles.
- `ssm_mech.recurrent`: Linear-recurrence scans in pure PyTorch, and the recurrent sequence mixers built on them: Mamba (with its short-convolution ablations), DeltaNet, Mamba-2 and gated linear attention, each with named hook points and token-by-token inference."""

__version__ = "0.1.0"
