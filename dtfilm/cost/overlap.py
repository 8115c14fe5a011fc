"""How much of each group's communication a step exposes, under the `overlap` input.

`none` is the seeds' whiteboard: every second of traffic on the critical path. `framework` is what
the frameworks do, per group, in the shape their sources give (Exposed = the part that does not
fit under the compute it runs beside, never less than what must wait for the compute to finish):

- dp, ZeRO 0-2: PyTorch DDP all-reduces the gradients in buckets of 25 MB (`bucket_cap_mb=25`,
  in MiB) as the backward pass produces them (Li et al., "PyTorch Distributed", VLDB 2020,
  sections 3.2.3 and 4; Megatron-LM's `--overlap-grad-reduce` does the same). With gradient
  accumulation only the last micro-batch's backward reduces (`no_sync` before it). Buckets fall
  due evenly over that backward and run one after another: the last bucket is always exposed,
  and the rest when they outrun the compute: max(T/k, T - B (k-1)/k) for k buckets. ZeRO-1 and -2
  reduce the same bytes in the same buckets (Megatron-LM's distributed optimizer with
  `--overlap-grad-reduce`); their all-gather of the updated weights is priced with them, under
  the backward, though Megatron can also hide it under the next forward (`--overlap-param-gather`).
  That is the input `dp_overlap: buckets`. `dp_overlap: after` is a framework that reduces once the
  backward is done, all of it exposed: Megatron-LM's own DDP (`--DDP-impl local`, "a simple one of
  our own that performs gradient all-reduce at the end of back propagation step", its README of
  2021-22; its sc21 scripts ran every pipelined model of Narayanan et al. 2021 with it) and
  DeepSpeed's pipeline engine (deepspeed/runtime/pipe/schedule.py: TrainSchedule issues
  ReduceGrads after the batch's last backward).
- dp, ZeRO-3 / FSDP: each unit's (layer's) all-gather is prefetched under the previous unit's
  compute, forward and backward; its reduce-scatter follows its backward (Zhao et al., "PyTorch
  FSDP", VLDB 2023, section 3.3; ZeRO, Rajbhandari et al. 2019, section 7). The first gather of
  each pass and the last reduce-scatter are exposed, and every unit whose traffic outruns its
  compute: per micro-batch g + (L-1) max(0, g - f) forward, g + r + (L-1) max(0, g + r - b) backward.
- tp: with sequence parallelism, Transformer Engine's userbuffers split each all-gather and
  reduce-scatter into t chunks and run them under the GEMM they feed (Megatron-LM and Megatron
  Bridge `tp_comm_overlap`, which they gate on sequence parallelism): the first chunk exposed,
  max(T/t, T - M (t-1)/t) per pass, M that pass's matmuls. Without sequence parallelism TP's
  all-reduces sit between dependent GEMMs, on the critical path (Megatron-LM, Narayanan et al. 2021).
  The default takes the overlap where the plan allows it: NVIDIA's H100 recipes (NeMo, Megatron
  Bridge) switch it on with sequence parallelism, and a framework run without sequence
  parallelism (the 2021-22 runs) did not have it; nor does a TP group across nodes (userbuffers need
  its cards on one node's NVLink: TransformerEngine's comm_gemm_overlap README, "Requirements").
  That is the input `tp_overlap: gemm`.
  `tp_overlap: backward` is Megatron-LM's before Transformer Engine (from September 2021,
  commit cf7efd4f "allreduce overlap with wgrad gemm", on by default, until userbuffers came to
  Megatron-Core in October 2023): the forward's collectives (and a full recomputation's) wait,
  and in the backward a column-parallel layer launches its input gradient's all-reduce
  asynchronously and computes its weight gradient meanwhile (ColumnParallelLinearWithAsyncAllreduce;
  with sequence parallelism the input gradient's reduce-scatter, while the output gradient's
  all-gather of the row-parallel layer stays synchronous: LinearWithGradAccumulationAndAsync-
  Communication, March 2022). So the backward's own share of the traffic (all of it without
  sequence parallelism, half with: the reduce-scatters) hides under the weight-gradient GEMMs, one
  forward's matmuls: T - min(T_async, M_forward). Korthikanti et al. 2022's runs used this code.
- pp: in the interleaved schedule the send/receive of one micro-batch runs under other
  micro-batches' compute, and only the hops at the bubble's edges wait (Narayanan et al. 2021,
  section 4.2; Megatron Bridge sets `overlap_p2p_comm` with virtual stages, and batched blocking
  p2p without): 2(p-1) of the 2 v m hops exposed with v > 1, all of them with v = 1. That is the
  input `pp_overlap: interleaved`. `pp_overlap: blocking` waits for every hop, as Megatron-LM did
  until May 2023 (its p2p_communication batches isend/irecv, waits on them and synchronizes the
  device, "to protect against race condition when using batch_isend_irecv()"; the overlap came
  with commit f9283c5a, "Add option to overlap p2p communication", 2023-05-31).
- cp: ring attention sends the next K/V block while it computes on this one (Liu et al. 2023,
  section 3; Megatron's context parallelism does the same): exposed where the ring outruns the
  attention core, and never less than the gradients' last hop home.

Each group hides under the compute it runs beside independently of the others: they travel on
different links (NVLink, the network) and streams. A first-order simplification: where two hide
under the same compute they also contend for it, which the one slowdown below does not double.

Overlap is not free: communication kernels take SMs and memory bandwidth from the compute they
run beside. Lee et al., "Characterizing Compute-Communication Overlap in GPU-Accelerated
Distributed Deep Learning" (arXiv:2507.03114, 2025) measured compute 18.9% slower on average
(40% at worst) while a collective ran beside it, on A100, H100, MI250 and MI210. The step adds
that share of every hidden second: OVERLAP_COMPUTE_SLOWDOWN, a constant from that source, not fitted.

Functions take numpy arrays (dtfilm.cost.model: one entry per plan, an estimate one row) or
scalars (the estimate's timelines).
"""

from __future__ import annotations

from typing import Any

import numpy as np

OVERLAP_MODES = ("none", "framework")
TP_OVERLAP_MODES = ("gemm", "backward")  # Transformer Engine's chunks; Megatron-LM's async backward
DP_OVERLAP_MODES = ("buckets", "after")  # DDP's buckets under the backward; one reduction after it
PP_OVERLAP_MODES = ("interleaved", "blocking")  # hidden but at the bubble's edges; every hop waited for
DDP_BUCKET_BYTES = 25 * 2**20  # torch DistributedDataParallel(bucket_cap_mb=25): 25 MiB
OVERLAP_COMPUTE_SLOWDOWN = 0.189  # Lee et al. 2025: compute 18.9% slower beside communication


def _out(value: Any) -> Any:
    return value.item() if np.ndim(value) == 0 else value


def phase_shares(full_recompute: Any) -> tuple[Any, Any]:
    """Forward and backward shares of one micro-batch's compute: 2 FLOPs a parameter forward and
    4 backward (Kaplan et al. 2020), and a full recomputation runs a second forward inside the
    backward pass: 1/3 and 2/3, or 1/4 and 3/4."""
    full = np.asarray(full_recompute, dtype=float)
    return _out(1 / (3 + full)), _out((2 + full) / (3 + full))


def dp_buckets(gradient_bytes: Any) -> Any:
    """DDP's buckets: the gradient buffer in 25 MiB pieces (at least one)."""
    return _out(np.maximum(1, np.ceil(np.asarray(gradient_bytes, dtype=float) / DDP_BUCKET_BYTES)))


def dp_bucketed_exposed(total_seconds: Any, gradient_bytes: Any, backward_seconds: Any) -> Any:
    """The gradient all-reduce (ZeRO 0-2) in k buckets under the last micro-batch's backward of
    `backward_seconds`: max(T/k, T - B (k-1)/k)."""
    k = np.asarray(dp_buckets(gradient_bytes), dtype=float)
    total = np.asarray(total_seconds, dtype=float)
    return _out(np.maximum(total / k, total - np.asarray(backward_seconds) * (k - 1) / k))


TIMELINE_ROWS = 32  # at most this many drawn bars: consecutive buckets merge into one


def dp_bucket_timeline(
    total_seconds: float, gradient_bytes: float, backward_seconds: float, under_backward: bool = True
) -> list[dict[str, float]]:
    """When the buckets fall due and run, in seconds from the start of the last backward pass:
    what a timeline of one card's step draws (the last `end` minus the backward is the exposed
    part, under the slowdown). A 405B model has tens of thousands of buckets, so consecutive
    buckets merge into at most TIMELINE_ROWS rows: `first` to `last`, due when the last is due,
    from the first's start to the last's end. Not `under_backward` (`overlap: none`, or
    `dp_overlap: after`), the all-reduce starts when the backward ends and runs back to back:
    all of it exposed, as those inputs charge it."""
    k = int(dp_buckets(gradient_bytes))
    each = total_seconds / k

    def start(i: int) -> float:
        if not under_backward:
            return backward_seconds + (i - 1) * each
        # the bucket waits for its gradients (due at B i/k) or for the buckets before it, which
        # run back to back from the first: max over j <= i of B j/k + (i - j) T/k, at j = 1 or i
        return max(backward_seconds * i / k, backward_seconds / k + (i - 1) * each)

    per_row = -(-k // TIMELINE_ROWS)
    return [
        {
            "first": first,
            "last": (last := min(k, first + per_row - 1)),
            "ready": backward_seconds * last / k,
            "start": start(first),
            "end": start(last) + each,
        }
        for first in range(1, k + 1, per_row)
    ]


def fsdp_exposed(
    gather_seconds: Any,
    scatter_seconds: Any,
    units: Any,
    micro_batches: Any,
    forward_seconds: Any,
    backward_seconds: Any,
) -> Any:
    """ZeRO-3's gathers prefetched under the previous unit's compute and reduce-scatters under
    the backward. `gather_seconds` and `scatter_seconds` are the step's totals (2m gathers and m
    reduce-scatters of the whole buffer), forward and backward one micro-batch's compute; a unit
    is a layer (FSDP wraps each transformer block)."""
    m = np.asarray(micro_batches, dtype=float)
    n = np.maximum(np.asarray(units, dtype=float), 1)
    g = np.asarray(gather_seconds) / (2 * m * n)
    r = np.asarray(scatter_seconds) / (m * n)
    f = np.asarray(forward_seconds) / n
    b = np.asarray(backward_seconds) / n
    forward = g + (n - 1) * np.maximum(0.0, g - f)
    backward = g + r + (n - 1) * np.maximum(0.0, g + r - b)
    return _out(m * (forward + backward))


def fsdp_unit_timeline(
    gather_seconds: float, units: int, micro_batches: int, forward_seconds: float, prefetch: bool = True
) -> list[dict[str, float]]:
    """One micro-batch's forward: when each unit's gather runs and when its compute runs, the
    gather of unit i+1 beside the compute of unit i (seconds from the step's start). FSDP
    prefetches one unit ahead (its rate limiter holds at most two gathered units), so a gather
    starts when the one before it ends and the unit before it starts computing. Without
    `prefetch` (`overlap: none`) a gather starts when the unit before it has finished: every
    gather exposed, as that input charges it."""
    n = max(units, 1)
    g = gather_seconds / (2 * micro_batches * n)
    f = forward_seconds / n
    rows: list[dict[str, float]] = []
    comm_free, compute_free, previous_start = 0.0, 0.0, 0.0
    for unit in range(1, n + 1):
        gather_start = max(comm_free, previous_start if prefetch else compute_free)
        gather_end = gather_start + g
        comm_free = gather_end
        start = max(compute_free, gather_end)
        compute_free, previous_start = start + f, start
        rows.append(
            {"unit": unit, "gather_start": gather_start, "gather_end": gather_end, "start": start, "end": compute_free}
        )
    return rows


def fsdp_backward_timeline(
    gather_seconds: float,
    scatter_seconds: float,
    unit_backward_seconds: float,
    units: int,
    begin: float,
    prefetch: bool = True,
) -> tuple[list[dict[str, float]], dict[str, float]]:
    """One micro-batch's backward in the shape `fsdp_exposed` prices it, from `begin`: per unit
    (one unit's `gather_seconds`, `scatter_seconds`, `unit_backward_seconds`) the traffic beside
    the unit before's compute, a gather and (after the first) a reduce-scatter, and when the unit
    computes; then the last reduce-scatter, after the last unit. Its exposed part (the compute
    lane's gaps) is g + r + (L-1) max(0, g + r - b), as `fsdp_exposed` charges. Without
    `prefetch` (`overlap: none`) the traffic waits for the unit before to finish: all of it
    exposed, L (g + r)."""
    rows: list[dict[str, float]] = []
    comm_free, compute_free, previous_start = begin, begin, begin
    for unit in range(1, max(units, 1) + 1):
        gather_start = max(comm_free, previous_start if prefetch else compute_free)
        gather_end = gather_start + gather_seconds
        comm_free = gather_end + (scatter_seconds if unit > 1 else 0.0)
        start = max(compute_free, comm_free)
        compute_free, previous_start = start + unit_backward_seconds, start
        rows.append(
            {
                "unit": unit,
                "gather_start": gather_start,
                "gather_end": gather_end,
                "scatter_end": comm_free,
                "start": start,
                "end": compute_free,
            }
        )
    last_start = max(comm_free, compute_free)
    return rows, {"start": last_start, "end": last_start + scatter_seconds}


def tp_exposed(total_seconds: Any, tp: Any, forward_share: Any, matmul_forward: Any, matmul_backward: Any) -> Any:
    """TP's collectives in t chunks under the GEMMs of their pass: max(T/t, T - M (t-1)/t) for the
    forward's and the backward's traffic (`forward_share` of it is the forward's)."""
    t = np.asarray(tp, dtype=float)
    total = np.asarray(total_seconds, dtype=float)
    exposed = 0.0
    for traffic, matmul in ((total * forward_share, matmul_forward), (total * (1 - forward_share), matmul_backward)):
        exposed = exposed + np.maximum(traffic / t, traffic - np.asarray(matmul) * (t - 1) / t)
    return _out(exposed)


def tp_backward_exposed(
    total_seconds: Any, backward_share: Any, sequence_parallel: bool, weight_gradient_seconds: Any
) -> Any:
    """`tp_overlap: backward`: the backward's own collectives (`backward_share` of the traffic; all
    of them without sequence parallelism, the reduce-scatters, half, with) under the weight-gradient
    GEMMs they run beside; everything else waits."""
    total = np.asarray(total_seconds, dtype=float)
    asynchronous = total * np.asarray(backward_share) * (0.5 if sequence_parallel else 1.0)
    return _out(total - np.minimum(asynchronous, np.asarray(weight_gradient_seconds)))


def pp_exposed(total_seconds: Any, pp: Any, micro_batches: Any, virtual_stages: Any) -> Any:
    """Interleaved: the 2(p-1) hops at the bubble's edges of 2 v m; otherwise all of it."""
    v = np.asarray(virtual_stages, dtype=float)
    edges = np.minimum(1.0, (np.asarray(pp) - 1) / (v * np.asarray(micro_batches)))
    return _out(np.where(v > 1, np.asarray(total_seconds) * edges, total_seconds))


def cp_exposed(ring_seconds: Any, gradient_seconds: Any, cp: Any, attention_seconds: Any) -> Any:
    """Ring attention's K/V blocks and their gradients under the attention core they feed: what
    outruns it, and never less than the gradients' last hop home (1/c of their ring)."""
    total = np.asarray(ring_seconds) + np.asarray(gradient_seconds)
    last_hop = np.asarray(gradient_seconds) / np.maximum(np.asarray(cp, dtype=float), 1)
    return _out(np.maximum(last_hop, total - np.asarray(attention_seconds)))


def slowdown_seconds(hidden_seconds: Any) -> Any:
    """What the compute loses to the communication hidden beside it."""
    return _out(OVERLAP_COMPUTE_SLOWDOWN * np.asarray(hidden_seconds))


def step_seconds(
    mode: str, compute_seconds: Any, bubble_overhead: Any, comm_seconds: Any, exposed: dict[str, Any]
) -> tuple[Any, Any]:
    """The step and its bubble, for every plan (dtfilm.cost.model's arrays).
    `none`: the whiteboard's sum, term for term (the contract's figures to the last digit).
    Otherwise an idle slot is a micro-batch's forward and backward with the TP waits inside them,
    (p-1)(t_f + t_b) (Narayanan et al. 2021, 2.2.1), and the step adds the exposed traffic and
    what the hidden traffic slows the compute by."""
    if mode == "none":
        bubble = compute_seconds * bubble_overhead
        return compute_seconds + bubble + comm_seconds, bubble
    exposed_seconds = exposed["dp"] + exposed["tp"] + exposed["pp"] + exposed["cp"] + exposed["ep"]
    bubble = (compute_seconds + exposed["tp"]) * bubble_overhead
    return compute_seconds + bubble + exposed_seconds + slowdown_seconds(comm_seconds - exposed_seconds), bubble


def exposed_by_group(
    mode: str,
    *,
    dp_seconds: Any,
    dp_gather_seconds: Any,
    dp_scatter_seconds: Any,
    zero: Any,
    gradient_bytes: Any,
    layers: Any,
    micro_batches: Any,
    micro_batch_seconds: Any,
    matmul_seconds: Any,
    attention_seconds: Any,
    full_recompute: Any,
    tp_seconds: Any,
    tp: Any,
    tp_forward_share: Any,
    sequence_parallel: bool,
    pp_seconds: Any,
    pp: Any,
    virtual_stages: Any,
    cp_ring_seconds: Any,
    cp_gradient_seconds: Any,
    cp: Any,
    tp_overlap: str = "gemm",
    dp_overlap: str = "buckets",
    pp_overlap: str = "interleaved",
    tp_crosses_nodes: Any = False,
) -> dict[str, Any]:
    """Each group's exposed seconds per step. Compute figures are one micro-batch on the card
    (forward and backward, `matmul_seconds` and `attention_seconds` its terms); traffic figures
    the step's totals, as `comm` times them. Each group hides under the compute it runs beside,
    on its own link and stream, independently of the others."""
    cp_seconds = np.asarray(cp_ring_seconds) + np.asarray(cp_gradient_seconds)
    if mode == "none":
        return {"dp": dp_seconds, "tp": tp_seconds, "pp": pp_seconds, "cp": _out(cp_seconds)}
    forward, backward = phase_shares(full_recompute)
    m = np.asarray(micro_batches)
    step = np.asarray(micro_batch_seconds)
    bucketed = (
        dp_bucketed_exposed(dp_seconds, gradient_bytes, step * backward) if dp_overlap == "buckets" else dp_seconds
    )
    sharded = fsdp_exposed(dp_gather_seconds, dp_scatter_seconds, layers, m, step * forward, step * backward)
    matmul = m * np.asarray(matmul_seconds)
    if tp_overlap == "backward":
        # a layer's two backward collectives against its two forward ones (comm.tp_exchanges_per_layer,
        # a full recomputation's two more counted with the backward): the backward's own share is the
        # forward's; the weight-gradient GEMMs are one forward's matmuls
        tp_out = tp_backward_exposed(tp_seconds, tp_forward_share, sequence_parallel, matmul * forward)
    else:
        tp_hidden = tp_exposed(tp_seconds, tp, tp_forward_share, matmul * forward, matmul * backward)
        # Transformer Engine's userbuffers need the TP group in one node, on NVLink ("Tensor-parallel
        # GPUs must be on a single node", TransformerEngine examples/pytorch/comm_gemm_overlap/README.md)
        tp_out = np.where(np.asarray(sequence_parallel) & ~np.asarray(tp_crosses_nodes), tp_hidden, tp_seconds)
    return {
        "dp": _out(np.where(np.asarray(zero) >= 3, sharded, bucketed)),
        "tp": _out(np.asarray(tp_out)),
        "pp": pp_exposed(pp_seconds, pp, micro_batches, virtual_stages) if pp_overlap == "interleaved" else pp_seconds,
        "cp": cp_exposed(cp_ring_seconds, cp_gradient_seconds, cp, m * np.asarray(attention_seconds)),
    }
