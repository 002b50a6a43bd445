"""Independent oracles for the DeltaNet and GLA recurrences: flash-linear-attention's naive references.

`fla-core` (the `fla` package of flash-linear-attention) ships plain-PyTorch reference loops next to
its Triton kernels: `fla.ops.delta_rule.naive.delta_rule_recurrence` and
`fla.ops.gla.naive.naive_recurrent_gla`. They import on a CPU once `triton` and `packaging` are
installed (`pip install fla-core triton packaging`, in the `dev` extra); without them this module is
skipped. The Triton kernels and fla's layers (in the separate `flash-linear-attention` package) are
not used: the short convolution and the L2 norm of fla run only as Triton kernels, so they are not
part of the oracle.

Both references compute in float32 whatever their inputs (they call `.float()`), so we run ours in
float64 and in float32 and compare each against the float32 reference with `ATOL`/`RTOL` below.
Observed maximum absolute errors (fla-core 0.6.0, torch 2.13 CPU; the last test prints them): at most
7e-7 for the delta rule (both forms) and both mixers, 2.3e-6 for the bare GLA core, whose
unnormalised states reach values of order 10; float64 and float32 runs of ours err alike, so the
error is the reference's float32 rounding.

Tensor mapping, ours -> fla:
* DeltaNet core. Ours: `delta_rule_recurrent/chunkwise(q, k, v, beta)` with q, k, v (b, l, h, d),
  q already L2-normalised *and scaled* by dk^-0.5, beta (b, l, h). fla: `delta_rule_recurrence(q, k,
  v, beta)` with (b, h, l, d) tensors and beta (b, h, l); it scales q by dk^-0.5 itself. So we pass
  fla the unscaled q, transposed, and transpose its output back; final states are both (b, h, dk, dv).
* GLA core. Ours: `scan` over S_t = exp(gk_t) ⊙ S_{t-1} + k_t v_tᵀ, read out with q·dk^-0.5. fla:
  `naive_recurrent_gla(q, k, v, gk)`, (b, l, h, d) layout like ours, gk a log-decay, same scale.
* Whole mixers. The DeltaNet mixer is compared with its short convolutions bypassed (replaced by the
  identity: fla's conv is Triton-only) and, separately, with its own convolutions feeding the oracle
  (which checks everything after the convs: SiLU, L2 norm, scale, β, the core, the output RMSNorm
  and projection). GLA has no short convolution (fla's default), so its whole mixer is compared:
  projections, log-sigmoid gate / normaliser, the core, and fla's `rms_norm_ref` with the SiLU
  output gate (fla's FusedRMSNormGated).
"""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

fla_delta = pytest.importorskip("fla.ops.delta_rule.naive", reason=(
    "flash-linear-attention's reference loops are not importable: `pip install fla-core triton packaging` "
    "(the `dev` extra) to run the DeltaNet/GLA oracle tests"))
fla_gla = pytest.importorskip("fla.ops.gla.naive", reason="fla.ops.gla.naive not importable (see above)")
fla_norm = pytest.importorskip("fla.modules.norm.layernorm_gated", reason="fla's rms_norm_ref not importable")

from ssm_mech.recurrent import DeltaNet, GLA, delta_rule_recurrent, delta_rule_chunkwise, scan

ATOL, RTOL = 2e-5, 1e-4                                           # against a float32 reference
SHAPES = [(1, 1, 1, 4, 4), (2, 7, 1, 8, 8), (3, 33, 2, 16, 8), (2, 130, 4, 4, 16)]  # (b, l, h, dk, dv)
DTYPES = [torch.float32, torch.float64]


def _l2(t, eps=1e-6): return t * torch.rsqrt(t.pow(2).sum(-1, keepdim=True) + eps)  # fla's l2norm formula


ERRORS = {}                                                       # what -> largest max abs error seen


def _check(ours, ref, what):
    err = (ours.double() - ref.double()).abs().max().item()
    ERRORS[f"{what}, {ours.dtype}"] = max(err, ERRORS.get(f"{what}, {ours.dtype}", 0.0))
    assert torch.allclose(ours.double(), ref.double(), atol=ATOL, rtol=RTOL), f"{what}: max abs error {err:.3g}"
    return err


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_l{}_h{}_dk{}_dv{}".format(*s))
@pytest.mark.parametrize("form", ["recurrent", "chunkwise"])
def test_delta_rule_core(shape, dtype, form):
    b, l, h, dk, dv = shape
    g = torch.Generator().manual_seed(l * 131 + dk)
    q = _l2(torch.randn(b, l, h, dk, generator=g, dtype=dtype))
    k = _l2(torch.randn(b, l, h, dk, generator=g, dtype=dtype))
    v = torch.randn(b, l, h, dv, generator=g, dtype=dtype)
    beta = torch.rand(b, l, h, generator=g, dtype=dtype)
    S0 = 0.3 * torch.randn(b, h, dk, dv, generator=g, dtype=dtype)
    ref_o, ref_S = fla_delta.delta_rule_recurrence(*(t.transpose(1, 2) for t in (q, k, v, beta)), initial_state=S0)
    core = delta_rule_recurrent if form == "recurrent" else (lambda *a: delta_rule_chunkwise(*a, chunk_size=16))
    o, S = core(q * dk ** -0.5, k, v, beta, S0)
    assert o.dtype == dtype
    _check(o, ref_o.transpose(1, 2), f"delta rule ({form}) output")
    _check(S, ref_S, f"delta rule ({form}) final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_l{}_h{}_dk{}_dv{}".format(*s))
def test_gla_core(shape, dtype):
    b, l, h, dk, dv = shape
    g = torch.Generator().manual_seed(l * 17 + dv)
    q, k = (torch.randn(b, l, h, dk, generator=g, dtype=dtype) for _ in range(2))
    v = torch.randn(b, l, h, dv, generator=g, dtype=dtype)
    gk = F.logsigmoid(torch.randn(b, l, h, dk, generator=g, dtype=dtype)) / 4   # log-decays <= 0
    S0 = torch.randn(b, h, dk, dv, generator=g, dtype=dtype)
    ref_o, ref_S = fla_gla.naive_recurrent_gla(q, k, v, gk, initial_state=S0, output_final_state=True)
    S = scan(torch.exp(gk)[..., None], k[..., :, None] * v[..., None, :], S0, "auto")  # (b, l, h, dk, dv)
    o = torch.einsum("blhkv,blhk->blhv", S, q * dk ** -0.5)
    _check(o, ref_o, "GLA output")
    _check(S[:, -1], ref_S, "GLA final state")


def _delta_oracle(m:DeltaNet, x, q, k, v):
    "fla's reference core between our projections/convs (q, k, v before SiLU) and our output layers."
    H = m.n_heads
    q, k, v = (F.silu(t).unflatten(-1, (H, -1)) for t in (q, k, v))                # (b, l, h, e)
    beta = torch.sigmoid(m.b_proj(x))                                              # (b, l, h)
    o, S = fla_delta.delta_rule_recurrence(_l2(q).transpose(1, 2), _l2(k).transpose(1, 2), v.transpose(1, 2),
                                           beta.transpose(1, 2))
    o = fla_norm.rms_norm_ref(o.transpose(1, 2), m.o_norm.weight, None, eps=m.o_norm.eps).to(x.dtype)
    return m.o_proj(o.flatten(-2)), S


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("conv", ["bypassed", "ours"])
@pytest.mark.parametrize("mode", ["recurrent", "chunkwise"])
@pytest.mark.parametrize("d_model,n_heads,l", [(16, 1, 9), (32, 2, 70)])
def test_deltanet_mixer(d_model, n_heads, l, mode, conv, dtype):
    torch.manual_seed(d_model + l)
    m = DeltaNet(d_model, n_heads=n_heads, mode=mode, chunk_size=32).to(dtype)
    with torch.no_grad(): m.o_norm.weight.uniform_(0.5, 1.5)          # not the identity
    if conv == "bypassed": m.q_conv1d, m.k_conv1d, m.v_conv1d = nn.Identity(), nn.Identity(), nn.Identity()
    x = torch.randn(2, l, d_model, dtype=dtype)
    with torch.no_grad():
        q, k, v = m.q_conv1d(m.q_proj(x)), m.k_conv1d(m.k_proj(x)), m.v_conv1d(m.v_proj(x))
        ref, ref_S = _delta_oracle(m, x, q, k, v)
        y, S = m._mix(x, q, k, v)
        _check(m(x), ref, f"DeltaNet mixer ({mode}, conv {conv})")
    _check(y, ref, "DeltaNet _mix"); _check(S, ref_S, "DeltaNet final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("d_model,n_heads,l", [(16, 1, 9), (32, 4, 70), (64, 4, 130)])
def test_gla_mixer(d_model, n_heads, l, dtype):
    torch.manual_seed(d_model + l)
    m = GLA(d_model, n_heads=n_heads).to(dtype)
    with torch.no_grad(): m.g_norm.weight.uniform_(0.5, 1.5)          # not the identity
    x = torch.randn(2, l, d_model, dtype=dtype)
    with torch.no_grad():
        H = m.n_heads
        q, k, v = (p(x).unflatten(-1, (H, -1)) for p in (m.q_proj, m.k_proj, m.v_proj))
        gk = (F.logsigmoid(m.gk_proj(x)) / m.gate_logit_normalizer).unflatten(-1, (H, -1))
        o, ref_S = fla_gla.naive_recurrent_gla(q, k, v, gk, output_final_state=True)
        o = fla_norm.rms_norm_ref(o, m.g_norm.weight, None, z=m.g_proj(x).unflatten(-1, (H, -1)),
                                  eps=m.g_norm.eps, norm_before_gate=True).to(dtype)
        ref = m.o_proj(o.flatten(-2))
        y, S = m._run(x)
    _check(y, ref, "GLA mixer"); _check(S, ref_S, "GLA final state")


def test_report_errors(capsys):
    "Print the largest error of each comparison seen in this process (runs last in this module)."
    with capsys.disabled():
        for what, err in sorted(ERRORS.items()): print(f"\n  {what}: max abs error {err:.2e}", end="")
