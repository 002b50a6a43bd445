"""Independent oracles for the DeltaNet and GLA recurrences, and for the five mixers of `ssm_mech.modern`
(Gated DeltaNet, RetNet, RWKV-7, HGRN2, FoX): flash-linear-attention's naive references.

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

The modern mixers (second half of this file) use more of fla's pure-PyTorch references, each
skipping its own tests when its module is missing (older fla-core releases lack some):
`fla.ops.gated_delta_rule.naive` (+ `.gate.naive_gdn_gate`), `fla.ops.retention.naive` and
`fla.ops.simple_gla.naive` (retention with an initial state), `fla.ops.generalized_delta_rule.dplr.naive`
(RWKV-7's diagonal-plus-low-rank recurrence) with `fla.ops.rwkv7.gate_output_correction_ref` and
`fla.modules.norm.layernorm.group_norm_ref`, `fla.ops.gla.naive` (HGRN2's core: GLA with key 1 - f),
`fla.ops.hgrn.naive` (HGRN2 with one channel per head is HGRN), `fla.ops.forgetting_attn.naive`, and
`fla.modules.rotary.ops.rotary_embedding_ref` (RetNet's rotary embeddings). fla's layers for these
mixers are not in fla-core, and their short convolutions, token shift, fused norms and gates are
Triton-only: the tests compute those steps from the layers' formulas (written out below) or take
ours (the short convolution, as for DeltaNet), and hand everything else to the references.
Observed maximum absolute errors (same versions; against float32 references): gated delta rule
(both forms) 3.6e-7, Gated DeltaNet mixer 2.5e-7; retention 1.4e-5 from our float64 run but 3.8e-6
from our float32 one (unnormalised sums of up to 130 decayed terms: the reference's own float32
rounding), RetNet mixer 2.1e-7; DPLR core 7.6e-6 (chunkwise) and 3.9e-6 (recurrent), RWKV-7 mixer
3.9e-8, its final state 2.2e-6; the chunkwise GLA core of HGRN2 1.4e-5 in float32 (1.1e-6 in
float64; gates down to e^-30), HGRN2 mixer 1.3e-6, HGRN2 as HGRN 4.8e-7; forgetting attention
3.1e-6, FoX mixer 2.5e-6.
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


# ---------------------------------------------------------------------------------------------------
# The five mixers of `ssm_mech.modern` (nbs/03b_modern.ipynb): Gated DeltaNet, RetNet, RWKV-7, HGRN2, FoX.
# Each core is compared with fla's naive reference, then each whole mixer with its projections (and its
# short convolution or token shift, which fla runs only as Triton kernels) feeding fla's references.

from ssm_mech.modern import (GatedDeltaNet, RetNet, RWKV7, HGRN2, FoX, gated_delta_rule_recurrent,
                             gated_delta_rule_chunkwise, retention_parallel, retention_recurrent, dplr_recurrent,
                             dplr_chunkwise, gla_chunkwise, forgetting_attention)


def _fla(module:str):
    "An fla reference module, or a skip naming it (older fla-core releases lack some of them)."
    return pytest.importorskip(module, reason=f"{module} not importable: `pip install -U fla-core triton packaging`")


def _heads(t, h): return t.unflatten(-1, (h, -1))                  # (b, l, h*e) -> (b, l, h, e)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_l{}_h{}_dk{}_dv{}".format(*s))
@pytest.mark.parametrize("form", ["recurrent", "chunkwise"])
def test_gated_delta_rule_core(shape, dtype, form):
    fla_gdn = _fla("fla.ops.gated_delta_rule.naive")
    b, l, h, dk, dv = shape
    g = torch.Generator().manual_seed(l * 7 + dk)
    q = _l2(torch.randn(b, l, h, dk, generator=g, dtype=dtype))
    k = _l2(torch.randn(b, l, h, dk, generator=g, dtype=dtype))
    v = torch.randn(b, l, h, dv, generator=g, dtype=dtype)
    beta = torch.rand(b, l, h, generator=g, dtype=dtype)
    gl = F.logsigmoid(torch.randn(b, l, h, generator=g, dtype=dtype) + 2)   # log α < 0
    S0 = 0.3 * torch.randn(b, h, dk, dv, generator=g, dtype=dtype)
    ref_o, ref_S = fla_gdn.naive_recurrent_gated_delta_rule(q, k, v, beta, gl, initial_state=S0, output_final_state=True)
    core = gated_delta_rule_recurrent if form == "recurrent" else (lambda *a: gated_delta_rule_chunkwise(*a, chunk_size=16))
    o, S = core(q * dk ** -0.5, k, v, beta, gl, S0)                 # ours takes q already scaled
    assert o.dtype == dtype
    _check(o, ref_o, f"gated delta rule ({form}) output")
    _check(S, ref_S, f"gated delta rule ({form}) final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["recurrent", "chunkwise"])
@pytest.mark.parametrize("d_model,n_heads,l", [(16, 1, 9), (32, 2, 70), (64, 1, 130)])
def test_gated_deltanet_mixer(d_model, n_heads, l, mode, dtype):
    fla_gdn, fla_gate = _fla("fla.ops.gated_delta_rule.naive"), _fla("fla.ops.gated_delta_rule.gate")
    torch.manual_seed(d_model + l)
    m = GatedDeltaNet(d_model, n_heads=n_heads, mode=mode, chunk_size=32).to(dtype)
    with torch.no_grad(): m.o_norm.weight.uniform_(0.5, 1.5)          # not the identity
    x = torch.randn(2, l, d_model, dtype=dtype)
    with torch.no_grad():
        qkv = m.conv1d(torch.cat([m.q_proj(x), m.k_proj(x), m.v_proj(x)], -1))   # ours: fla's conv is Triton-only
        q, k, v = (_heads(t, n_heads) for t in F.silu(qkv).split([m.key_dim, m.key_dim, m.value_dim], -1))
        gl = fla_gate.naive_gdn_gate(m.a_proj(x), m.A_log, m.dt_bias, output_dtype=dtype)
        o, ref_S = fla_gdn.naive_recurrent_gated_delta_rule(_l2(q), _l2(k), v, torch.sigmoid(m.b_proj(x)), gl,
                                                            output_final_state=True)
        o = fla_norm.rms_norm_ref(o, m.o_norm.weight, None, z=_heads(m.g_proj(x), n_heads), eps=m.o_norm.eps,
                                  norm_before_gate=True).to(dtype)
        ref = m.o_proj(o.flatten(-2))
        y, S = m._mix(x, qkv)
        _check(m(x), ref, f"Gated DeltaNet mixer ({mode})")
    _check(y, ref, "Gated DeltaNet _mix"); _check(S, ref_S, "Gated DeltaNet final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_l{}_h{}_dk{}_dv{}".format(*s))
def test_retention_core(shape, dtype):
    fla_ret, fla_sgla = _fla("fla.ops.retention.naive"), _fla("fla.ops.simple_gla.naive")
    b, l, h, dk, dv = shape
    g = torch.Generator().manual_seed(l * 11 + dv)
    q, k = (torch.randn(b, l, h, dk, generator=g, dtype=dtype) for _ in range(2))
    v = torch.randn(b, l, h, dv, generator=g, dtype=dtype)
    S0 = torch.randn(b, h, dk, dv, generator=g, dtype=dtype)
    lg = torch.log1p(-2.0 ** (-5.0 - torch.arange(h, dtype=dtype)))   # RetNet's decays, as fla's naive_retention fixes them
    ref = fla_ret.naive_retention(*(t.transpose(1, 2) for t in (q, k, v))).transpose(1, 2)  # it scales q by dk^-0.5
    _check(retention_parallel(q, k * dk ** -0.5, v, lg), ref, "retention (parallel)")
    # the recurrent form with an initial state: fla's simple-GLA loop with the decay log γ_h at every step
    ref_o, ref_S = fla_sgla.naive_recurrent_simple_gla(q, k, v, lg.expand(b, l, h).contiguous(), initial_state=S0,
                                                       output_final_state=True)
    o, S = retention_recurrent(q * dk ** -0.5, k, v, lg, S0)        # fla scales q: with an S0, so must we
    _check(o, ref_o, "retention (recurrent)"); _check(S, ref_S, "retention final state")


def _fla_rotary(x, base=10000.0):
    "fla's rotary reference on (b, l, h, e), with the cos/sin tables of its `RotaryEmbedding` at positions 0..l-1."
    ro = _fla("fla.modules.rotary.ops")
    e, l = x.shape[-1], x.shape[1]
    inv_freq = 1.0 / (base ** (torch.arange(0, e, 2, dtype=x.dtype) / e))   # RotaryEmbedding._compute_inv_freq
    freqs = torch.outer(torch.arange(l, dtype=x.dtype), inv_freq)          # (l, e/2)
    return ro.rotary_embedding_ref(x, freqs.cos(), freqs.sin())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("rotary", [True, False])
@pytest.mark.parametrize("d_model,n_heads,l", [(16, 1, 9), (32, 2, 70), (64, 4, 130)])
def test_retnet_mixer(d_model, n_heads, l, rotary, dtype):
    fla_ret = _fla("fla.ops.retention.naive")
    torch.manual_seed(d_model + l)
    m = RetNet(d_model, n_heads=n_heads, rotary=rotary).to(dtype)
    with torch.no_grad(): m.g_norm.weight.uniform_(0.5, 1.5)
    x = torch.randn(2, l, d_model, dtype=dtype)
    with torch.no_grad():
        q, k, v = (_heads(p(x), n_heads) for p in (m.q_proj, m.k_proj, m.v_proj))
        if rotary: q, k = _fla_rotary(q), _fla_rotary(k)
        o = fla_ret.naive_retention(*(t.transpose(1, 2) for t in (q, k, v))).transpose(1, 2)
        o = fla_norm.rms_norm_ref(o, m.g_norm.weight, None, z=_heads(m.g_proj(x), n_heads), eps=m.g_norm.eps,
                                  norm_before_gate=True).to(dtype)
        _check(m(x), m.o_proj(o.flatten(-2)), f"RetNet mixer (rotary {rotary})")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_l{}_h{}_dk{}_dv{}".format(*s))
@pytest.mark.parametrize("form", ["recurrent", "chunkwise"])
def test_dplr_core(shape, dtype, form):
    fla_dplr = _fla("fla.ops.generalized_delta_rule.dplr.naive")
    b, l, h, dk, dv = shape
    g = torch.Generator().manual_seed(l * 13 + dk)
    r, k = (torch.randn(b, l, h, dk, generator=g, dtype=dtype) for _ in range(2))
    v = torch.randn(b, l, h, dv, generator=g, dtype=dtype)
    w = -0.6065306597126334 * torch.rand(b, l, h, dk, generator=g, dtype=dtype)  # RWKV-7's range of log w
    kk = _l2(torch.randn(b, l, h, dk, generator=g, dtype=dtype))
    a_rate = torch.rand(b, l, h, dk, generator=g, dtype=dtype)
    S0 = 0.3 * torch.randn(b, h, dk, dv, generator=g, dtype=dtype)
    # fla: (b, h, l, d) tensors, S_t = (diag(e^gk) + β αᵀ) S_{t-1} + k vᵀ; it scales q by dk^-0.5, RWKV-7 does not
    # (it computes in float32 but leaves α and the initial state as given: we hand it float32 throughout)
    ref_o, ref_S = fla_dplr.dplr_recurrence(*(t.transpose(1, 2).float() for t in (r * dk ** 0.5, k, v, -kk, kk * a_rate, w)),
                                            initial_state=S0.float(), output_final_state=True)
    core = dplr_recurrent if form == "recurrent" else (lambda *a: dplr_chunkwise(*a, chunk_size=16))
    o, S = core(r, w, k, v, -kk, kk * a_rate, S0)
    _check(o, ref_o.transpose(1, 2), f"DPLR ({form}) output")
    _check(S, ref_S, f"DPLR ({form}) final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["recurrent", "chunkwise"])
@pytest.mark.parametrize("d_model,n_heads,l,layer_idx", [(16, 1, 9, 0), (32, 2, 70, 1), (64, 1, 130, 1)])
def test_rwkv7_mixer(d_model, n_heads, l, layer_idx, mode, dtype):
    fla_dplr, fla_goc = _fla("fla.ops.generalized_delta_rule.dplr.naive"), _fla("fla.ops.rwkv7.gate_output_correction")
    fla_ln = _fla("fla.modules.norm.layernorm")
    torch.manual_seed(d_model + l)
    m = RWKV7(d_model, n_heads=n_heads, layer_idx=layer_idx, mode=mode).to(dtype)
    with torch.no_grad(): m.g_norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, l, d_model, dtype=dtype)
    with torch.no_grad():
        # fla's RWKV7Attention, written out (its token shift, addcmul, LoRA and k-update are Triton kernels)
        delta = F.pad(x, (0, 0, 1, -1)) - x                              # token_shift: x_{t-1} - x_t
        xr, xw, xk, xv, xa, xg = (x + delta * mu for mu in m.mu)
        lora = lambda t, A, B, b=None: t @ A @ B if b is None else b + t @ A @ B
        r, k, v = m.r_proj(xr), m.k_proj(xk), m.v_proj(xv)
        w = -0.6065306597126334 * (m.w0 + torch.tanh(xw @ m.w1) @ m.w2).sigmoid()
        a = lora(xa, m.a1, m.a2, m.a0).sigmoid()
        gate = torch.sigmoid(xg @ m.g1) @ m.g2
        kk = F.normalize(_heads(k * m.k_k, n_heads), dim=-1, p=2.0)
        k = k.addcmul(k * (a - 1), m.k_a)
        r, w, k, a, v = (_heads(t, n_heads) for t in (r, w, k, a, v))
        e = d_model // n_heads
        o, ref_S = fla_dplr.dplr_recurrence(*(t.transpose(1, 2).float() for t in (r * e ** 0.5, k, v, -kk, kk * a, w)))
        o = fla_ln.group_norm_ref(o.transpose(1, 2).flatten(-2), m.g_norm.weight, m.g_norm.bias, n_heads, eps=m.g_norm.eps)
        o = fla_goc.gate_output_correction_ref(o, r, k, m.r_k, v, gate)
        ref = m.o_proj(o)
        y, S = m._mix(x, F.pad(x, (0, 0, 1, -1)))
        _check(m(x), ref, f"RWKV-7 mixer ({mode})")
    _check(y, ref, "RWKV-7 _mix"); _check(S, ref_S, "RWKV-7 final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["recurrent", "chunkwise"])
@pytest.mark.parametrize("d_model,n_heads,l,layer_idx", [(16, 1, 9, 0), (32, 2, 70, 1), (64, 1, 130, 2)])
def test_hgrn2_mixer(d_model, n_heads, l, layer_idx, mode, dtype):
    fla_ln = _fla("fla.modules.norm.layernorm")
    torch.manual_seed(d_model + l)
    m = HGRN2(d_model, n_heads=n_heads, layer_idx=layer_idx, n_layers=3, mode=mode).to(dtype)
    with torch.no_grad():
        m.g_norm.weight.uniform_(0.5, 1.5)
        if m.lower_bound is not None: m.lower_bound.uniform_(-2, 2)
    x = torch.randn(2, l, d_model, dtype=dtype)
    with torch.no_grad():
        # fla's HGRN2Attention: q = swish, g = logsigmoid(f) lower-bounded (its lower_bound is the probability γ itself)
        q, f, i = F.silu(m.q_proj(x)), m.f_proj(x), m.i_proj(x)
        g = F.logsigmoid(f)
        if m.lower_bound is not None:
            lb = torch.sigmoid(m.lower_bound)
            g = torch.logaddexp(lb.log(), torch.log1p(-lb) + g)
        k = 1 - g.exp()
        o, ref_S = fla_gla.naive_recurrent_gla(*(_heads(t, n_heads) for t in (q, k, i, g)), output_final_state=True)
        o = fla_ln.rms_norm_ref(o.flatten(-2).to(dtype), m.g_norm.weight, None, eps=m.g_norm.eps)
        ref = m.o_proj(o)
        y, S = m._run(x)
    _check(y, ref, f"HGRN2 mixer ({mode})"); _check(S, ref_S, "HGRN2 final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_l{}_h{}_dk{}_dv{}".format(*s))
def test_gla_chunkwise_core(shape, dtype):
    "HGRN2's chunkwise core (per-channel decays) against fla's GLA loop, with gates near 0 at one step."
    b, l, h, dk, dv = shape
    g = torch.Generator().manual_seed(l * 19 + dv)
    q, k = (torch.randn(b, l, h, dk, generator=g, dtype=dtype) for _ in range(2))
    v = torch.randn(b, l, h, dv, generator=g, dtype=dtype)
    gk = F.logsigmoid(3 * torch.randn(b, l, h, dk, generator=g, dtype=dtype)); gk[:, l // 2] = -30.0
    S0 = torch.randn(b, h, dk, dv, generator=g, dtype=dtype)
    ref_o, ref_S = fla_gla.naive_recurrent_gla(q, k, v, gk, initial_state=S0, output_final_state=True)
    o, S = gla_chunkwise(q * dk ** -0.5, k, v, gk, S0, chunk_size=16)
    _check(o, ref_o, "GLA chunkwise output"); _check(S, ref_S, "GLA chunkwise final state")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_hgrn2_is_hgrn_per_channel(dtype):
    "With one head per channel (state expansion 1) HGRN2's recurrence is HGRN's: h_t = f_t h_{t-1} + (1 - f_t) i_t, times q_t."
    fla_hgrn = _fla("fla.ops.hgrn.naive")
    torch.manual_seed(3)
    m = HGRN2(16, n_heads=16, layer_idx=1).to(dtype)
    x = torch.randn(2, 40, 16, dtype=dtype)
    seen = {}
    hs = [getattr(m, f"hook_{n}").register_forward_hook(lambda mod, i, o, n=n: seen.__setitem__(n, o)) for n in ("q", "gk", "k", "v")]
    with torch.no_grad():
        m(x)
        h, _ = fla_hgrn.naive_recurrent_hgrn(seen["k"] * seen["v"], seen["gk"])   # (b, l, d)
        ref = m.o_proj(m.g_norm((h * seen["q"]).to(dtype)))
        _check(m(x), ref, "HGRN2 with state expansion 1 vs HGRN")
    for hd in hs: hd.remove()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "b{}_l{}_h{}_dk{}_dv{}".format(*s))
def test_forgetting_attention_core(shape, dtype):
    fla_fox = _fla("fla.ops.forgetting_attn.naive")
    b, l, h, e, _ = shape
    g = torch.Generator().manual_seed(l * 17 + e)
    q, k, v = (torch.randn(b, l, h, e, generator=g, dtype=dtype) for _ in range(3))
    logf = F.logsigmoid(torch.randn(b, l, h, generator=g, dtype=dtype) + 1)
    ref = fla_fox.naive_forgetting_attn(q, k, v, logf)
    _check(forgetting_attention(q, k, v, logf.cumsum(1)), ref, "forgetting attention")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("d_model,n_heads,l", [(16, 1, 9), (32, 2, 70), (64, 4, 130)])
def test_fox_mixer(d_model, n_heads, l, dtype):
    fla_fox = _fla("fla.ops.forgetting_attn.naive")
    torch.manual_seed(d_model + l)
    m = FoX(d_model, n_heads=n_heads).to(dtype)
    with torch.no_grad(): m.f_proj.bias.uniform_(-1, 3)
    x = torch.randn(2, l, d_model, dtype=dtype)
    with torch.no_grad():
        q, k, v = (_heads(p(x), n_heads) for p in (m.q_proj, m.k_proj, m.v_proj))
        o = fla_fox.naive_forgetting_attn(q, k, v, F.logsigmoid(m.f_proj(x).float()))   # fla's layer: logsigmoid in fp32
        _check(m(x), m.o_proj(o.flatten(-2).to(dtype)), "FoX mixer")


def test_report_errors(capsys):
    "Print the largest error of each comparison seen in this process (runs last in this module)."
    with capsys.disabled():
        for what, err in sorted(ERRORS.items()): print(f"\n  {what}: max abs error {err:.2e}", end="")
