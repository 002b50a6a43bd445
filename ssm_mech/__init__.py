"""Mechanistic evaluation of Transformers and state space models: train small sequence models on in-context retrieval tasks and dissect how they solve them with interchange interventions.

The package is built in floors, bottom to top: a module imports only from the floors below it
(`ssm_mech.core.FLOORS`; `tests/test_layers.py` checks every import). The modules, floor by floor
(`help(ssm_mech.tasks)` teaches one; those listed again under "Modules" below open with a longer overview):

- floor 0, `ssm_mech.core`: Named hook points, the mixer registry, the causal convolutions shared by several mixers, and device selection.
- floor 1, `ssm_mech.pcfg`: A random probabilistic context-free grammar whose derivations are dependency trees over terminals, sampled many trees at a time: the language behind associative treecall.
- floor 2, `ssm_mech.tasks`: Associative recall (AR) and associative treecall (ATR): seeded, vectorised generators of the paper's synthetic retrieval tasks, with named positions for interventions.
- floor 3, `ssm_mech.mixers`: Multi-head attention, the MLP, BaseConv, Based (Taylor linear attention), Hyena and H3: the paper's sequence mixers that are not recurrent scans, in plain PyTorch.
- floor 3, `ssm_mech.recurrent`: Linear-recurrence scans in pure PyTorch, and the recurrent sequence mixers built on them: Mamba (with its short-convolution ablations), DeltaNet, Mamba-2 and gated linear attention, each with named hook points and token-by-token inference.
- floor 4, `ssm_mech.modern`: Five mixers from 2023–2025 beyond the paper's zoo, each in readable PyTorch from its paper: Gated DeltaNet, RetNet's multi-scale retention, RWKV-7, HGRN2 and the Forgetting Transformer, with named hook points, a step form equal to the parallel one, and fla's reference loops as independent oracles.
- floor 5, `ssm_mech.model`: The paper's small language model around any registered mixer: tied embeddings, optional learned positions, pre-norm blocks with named residual hook points, zoology's initialisation, and safetensors checkpoints.
- floor 6, `ssm_mech.runs`: An experiment as plain data (task, model, training protocol), and the directory a run lives in: its files by name, its status and metrics, and `Run`, which opens it.
- floor 7, `ssm_mech.train`: The paper's training protocol, presets for every experiment, and runs that resume bit-identically.
- floor 8, `ssm_mech.packed`: Many small runs of one architecture trained as one stacked model in one process, each writing a run directory that is indistinguishable from a solo run's.
- floor 9, `ssm_mech.fast_patching`: Interventions in seconds: patched runs that recompute only what a patch changes, and a gradient screen that estimates every site at once.
- floor 10, `ssm_mech.sites`: Where an interchange intervention patches: a hook point and a position named per document, the usual grids of sites, the sites the verdict and the convolution binding read, and what every hook point means.
- floor 11, `ssm_mech.patching`: Corrupt one token, cache and overwrite activations, and sweep many sites at once: O, C, R and the association of every site, exactly or estimated by attribution patching.
- floor 12, `ssm_mech.verdict`: Decide from the patching numbers whether a model solves recall by induction or by direct retrieval, with the accuracy gate and intervals, and keep the decision as one stored record, the `Dissection`.
- floor 13, `ssm_mech.interventions`: The method in one import: re-exports the sites, the patching and the verdict, so `from ssm_mech.interventions import …` reaches all three.
- floor 14, `ssm_mech.results`: A sweep's runs as one tidy table, and the selections the paper reports from it: final metrics, the best learning rate on test or chosen on dev, and the runs whose mechanism can be measured.
- floor 15, `ssm_mech.explorer`: One trained model, every layer, hook point and position: an interactive explorer of how much of the answer patching each site restores, example by example.
- floor 16, `ssm_mech.viz`: The paper's figures drawn straight from sweep tables: accuracy against width, restoration heatmaps, association scatters and the scoreboard.
- floor 17, `ssm_mech.experiments`: Training and interventions wired together: train a run with the mechanism logger, dissect a finished run into its verdict, patching table and heatmap, and open it in the explorer.
- floor 18, `ssm_mech.sweep`: Grids of experiments as data, run locally or on a Ray cluster, resumable and fault-isolated; `collect` (in `ssm_mech.results`) turns them into one tidy table.
- floor 19, `ssm_mech.publish`: A sweep's results copied into a tidy `results/<name>/` folder (no checkpoints), several sessions merged, and the folder's README written from its data.
- floor 20, `ssm_mech.report`: Bring your own mixer: check it against the mixer contract, train it on AR, ATR and MQAR, dissect every model, and write one self-contained report beside the zoo's mixers.
- floor 21, `ssm_mech.cli`: `ssm-mech`: train, evaluate and dissect models, run sweeps, and the end-to-end demo.

Modules:

- `ssm_mech.interventions`: Patch activations from a clean run into a counterfactual run at any site, measure how much of the answer comes back, and decide whether a model solves recall by induction or by direct retrieval.
- `ssm_mech.modern`: Five mixers from 2023–2025 beyond the paper's zoo, each in readable PyTorch from its paper: Gated DeltaNet, RetNet's multi-scale retention, RWKV-7, HGRN2 and the Forgetting Transformer, with named hook points, a step form equal to the parallel one, and fla's reference loops as independent oracles.
- `ssm_mech.patching`: Corrupt one token, cache and overwrite activations, and sweep many sites at once: O, C, R and the association of every site, exactly or estimated by attribution patching.
- `ssm_mech.recurrent`: Linear-recurrence scans in pure PyTorch, and the recurrent sequence mixers built on them: Mamba (with its short-convolution ablations), DeltaNet, Mamba-2 and gated linear attention, each with named hook points and token-by-token inference."""

__version__ = "0.1.0"
