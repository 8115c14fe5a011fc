"""Size the mechanisms of DeepSpeed's 2021 pipeline the model does not price, for the MT-NLG runs.

    python benchmarks/deepspeed_candidates.py

The three MT-NLG runs (Smith et al. 2022, section 2.4) are predicted 12-16% fast under `framework`,
7.2, 6.4 and 7.1 s a step short while their micro-batches go 240, 192, 160: a per-step cost about
one pipeline bubble long. Each candidate here is priced with the model's own links, collectives and
stage times, on the configuration the table prices (published.published_step), so the run's
`error_reason` (dtfilm/data/published_runs.yaml) can say how far each is from the gap. Sources,
microsoft/DeepSpeed at e2fdd254e (29 September 2021, "Big science related changes", co-authored by
MT-NLG's first author) unless said:
- pipe/p2p.py, pipe/engine.py, pipe/schedule.py: every send and receive blocks the stream
  (`dist.send`/`dist.recv`, or `dist.broadcast` before torch 1.8); a middle stage runs four per
  micro-batch (RecvActivation and SendGrad in its forward step, SendActivation and RecvGrad in its
  backward step) where the model charges two; each carries the TP rank's 1/t share
  (PartitionedTensor) and is rebuilt with an all-gather over the TP group: the activation in the
  forward, the output and the gradient in the backward.
- v0.5.0 (August 2021) had `is_grad_partitioned = False`: every TP rank sent the whole gradient,
  and only the activation and the output were rebuilt.
- activation_checkpointing/checkpointing.py: with `partition_activations` each checkpointed layer's
  input is all-gathered over the TP group in the backward (MT-NLG's setting is not published).
- pipe/engine.py `_exec_reduce_tied_grads`: the tied embedding's gradient all-reduced between the
  first and the last stage after the flush.
- zero/stage2.py (ZeRO-1 and -2): `allreduce_always_fp32` (default False) reduces in fp32.
- The Adam step on a card's 1/dp share: fp32 parameter, gradient, m and v read (16 bytes), the three
  written (12), the 16-bit copy written (2), the gradient read twice more to unscale and take its
  norm (8): 38 bytes a parameter through HBM.
- The first stage's embedding: its dense gradient (vocab/t x h, 16-bit) written, then read and added
  into the gradient buffer: 4 passes through HBM a micro-batch; the busiest stage (the last, with
  the LM head) sets the pipeline's pace in the model (estimate.stage_times), so this counts only if
  it made the first stage the slower.
- pipe/module.py `_is_checkpointable`: GPTModelPipe checkpoints its transformer layers only, so the
  LM head is not recomputed; the model recomputes it under full recomputation (a negative size).
Per-micro-batch costs sit on the critical path m + p - 1 times (the steady state and the bubble).
"""

from __future__ import annotations

from dtfilm.cost import comm, published_runs
from dtfilm.cost import published as pub
from dtfilm.cost.estimate import estimate_setup, stage_times
from dtfilm.cost.hardware import LINKS
from dtfilm.cost.models import head_matmul_params, layer_params
from dtfilm.cost.planner import evaluate, factorisations, setup_for
from dtfilm.cost.setup import Setup

RUNS = ("mt-nlg-530b-2240", "mt-nlg-530b-2800", "mt-nlg-530b-3360")
ADAM_BYTES_PER_PARAM = 38  # the module docstring's count
ELEMENT_BYTES = 2  # bf16 activations and gradients


def priced_setup(run: published_runs.PublishedRun) -> Setup:
    """The Setup the table prices for the run (published.published_step's plan)."""
    setup = pub._base_setup(run, pub.TABLE_OVERLAP)
    keys = ("dp", "tp", "pp", "cp")
    stated = [
        lay for lay in factorisations(setup) if all(run.settings.get(k, v) == v for k, v in zip(keys, lay, strict=True))
    ]
    plans = evaluate(setup, run.global_batch, stated, pub._virtual_stage_choices(run))
    row = pub._as_stated(pub._fastest(plans, pub._matches(plans, run) & plans.fits), run)
    assert row is not None, run.name
    return setup_for(setup, row)


def candidates(setup: Setup) -> dict[str, float]:
    """Seconds each mechanism would add to the step (negative: the model charges it, DeepSpeed not)."""
    e = estimate_setup(setup)
    t, slots = setup.tp, setup.micro_batches + setup.pp - 1
    nvlink, ib = LINKS[setup.card.nvlink], setup.inter_node
    activation = comm.activation_buffer_bytes(setup, ELEMENT_BYTES)
    gather = nvlink.latency_seconds * (t - 1) + comm.all_gather_bytes(activation, t) / nvlink.per_card_bytes_per_second(
        setup.cards_per_node
    )
    ib_bandwidth = ib.per_card_bytes_per_second(setup.cards_per_node)
    share = ib.latency_seconds + activation / t / ib_bandwidth
    whole = ib.latency_seconds + activation / ib_bandwidth
    layers = e["memory"]["layers"]
    last = stage_times(setup)[-1]
    head = head_matmul_params(setup.shape)
    head_share = head / (layers * layer_params(setup.shape) + head)
    embedding = setup.shape.vocab * setup.shape.hidden / t * ELEMENT_BYTES
    return {
        "p2p: 2 more blocking transfers + 3 all-gathers a micro-batch": slots * (2 * share + 3 * gather),
        "p2p as v0.5.0: the whole gradient, 2 all-gathers (instead)": slots
        * (2 * share + 2 * (whole - share) + 2 * gather),
        "partition_activations: an all-gather a layer": slots * layers * gather,
        "tied embedding gradient all-reduce": 2 * ib.latency_seconds
        + comm.all_reduce_bytes(embedding, 2) / ib_bandwidth,
        "ZeRO-1 reduce in fp32": e["comm"]["seconds_by_group"]["dp"] / 2,
        "Adam step on the 1/dp share": e["memory"]["params_on_card"]
        / setup.dp
        * ADAM_BYTES_PER_PARAM
        / setup.card.hbm_bytes_per_second,
        "LM head not recomputed": -slots * last.matmul * head_share / 4,
    }


def main() -> int:
    runs = published_runs.load_runs()
    for name in RUNS:
        run = runs[name]
        setup = priced_setup(run)
        predicted, published = pub.published_step(run)
        times = [t.seconds for t in stage_times(setup)]
        embedding = setup.shape.vocab * setup.shape.hidden / setup.tp * ELEMENT_BYTES
        embedding_seconds = 4 * embedding / setup.card.hbm_bytes_per_second
        print(
            f"{name}: {setup.micro_batches} micro-batches, predicted {predicted:.2f} s, published {published:.2f} s, "
            f"gap {published - predicted:.2f} s; stage per micro-batch: first {1e3 * times[0]:.1f} ms, "
            f"middle {1e3 * times[len(times) // 2]:.1f} ms, last {1e3 * times[-1]:.1f} ms; "
            f"the first stage's embedding gradient {1e3 * embedding_seconds:.2f} ms more"
        )
        for what, seconds in candidates(setup).items():
            print(f"  {what:62s} {seconds:+.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
