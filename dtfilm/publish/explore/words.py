"""The page's prose, after seed 000, with every number a template the cost model fills.

Each text names the reference state whose numbers it reads (`REFERENCES`): the page's default
state under the pill, without checkpointing, or variants (one micro-batch, checkpointing on).
"""

from __future__ import annotations

# name -> (pill, overrides on the page's default state)
REFERENCES = {
    "DP": ("DP", {}),
    "TP": ("TP", {}),
    "PP": ("PP", {}),
    "FSDP": ("FSDP", {}),
    "CP": ("CP", {}),
    "EP": ("EP", {}),  # on the picker's first mixture-of-experts model (page._prose)
    "3D": ("3D", {}),
    "FSDP_ONE": ("FSDP", {"micro_batches": 1}),
    "CKPT": ("DP", {"checkpointing": True}),
}

INTRO = (
    "DP",
    "Training a language model is a memory problem before it is a compute problem. Every parameter"
    " needs its weight, its gradient and its optimiser state resident at the same time, and with Adam"
    " in mixed precision that is {bytes_per_param.total:int} bytes each. A {params:si} model is"
    " {state.total:GB} of state before a single activation, and one {cluster.gpu_label} holds"
    " {cluster.capacity:GB}. The rack below shows the model as a loaf of layers and each strategy as"
    " the way it is sliced: every card's piece of the loaf sits above it, its memory gauge inside it.",
)

PILL_TEXT = {
    "DP": (
        "DP",
        "Data parallelism does not slice at all: every card holds a full copy and trains on its own"
        " slice of the batch, then all cards average their gradients in a ring. The gauges do not fall"
        " as you add cards. What it buys is throughput; what it costs is one all-reduce of the whole"
        " gradient buffer per step, {comm.dp:bytes} per card here.",
    ),
    "TP": (
        "TP",
        "Tensor parallelism slices every weight matrix along its hidden dimension, so each card holds"
        " a {plan.tp:int}th of every layer. Memory falls as one over the card count, but the pieces of a"
        " layer exchange partial results {comm.tp_exchanges.total:word} times per layer, forward and"
        " backward: small exchanges in the critical path, which is why tensor parallelism stays inside"
        " the {cluster.intra_node_link_label} of one node.",
    ),
    "PP": (
        "PP",
        "Pipeline parallelism slices across layers: each of {plan.pp:int} cards owns a run of layers, and"
        " activations flow forward along an assembly line. Traffic drops to one activation per stage"
        " boundary per micro-batch. The cost is idle time: the timeline draws the bubble as empty"
        " slots, {pipeline.bubble_fraction:%} of the step with {inputs.micro_batches:int} micro-batches."
        " More micro-batches shrink it.",
    ),
    "FSDP": (
        "FSDP_ONE",
        "FSDP (ZeRO stage 3) keeps the shape of data parallelism and fixes its memory: weights,"
        " gradients and optimiser state are sharded across the cards, and each layer's weights are"
        " gathered just before they are needed and freed just after. The gauges fall as one over the"
        " card count; the traffic is {comm.fsdp_vs_dp:x} data parallel's with one micro-batch, and"
        " grows with each further micro-batch, since the weights are gathered for every one.",
    ),
    "CP": (
        "CP",
        "Context parallelism slices the sequence itself: every sequence's tokens are dealt over"
        " {plan.cp:int} cards, and every layer's activations with them. Attention needs every earlier"
        " token, so the cards pass their keys and values"
        " around a ring, {comm.cp:bytes} per card a step here over {comm.link_labels.cp}: it pays off"
        " when one sequence's activations outgrow the card.",
    ),
    "EP": (
        "EP",
        "Expert parallelism slices a mixture of experts: {model.label} has {model.experts:int} experts"
        " in each feed-forward layer, of which a router picks {model.top_k:int} for each token, so it"
        " holds {params:si} parameters but multiplies a token by {params_active:si}. Spread over"
        " {plan.ep:int} cards, each card keeps its share of the experts, and every token travels to"
        " the cards that hold its experts and back: an all-to-all of {comm.ep:bytes} per card a step"
        " here.",
    ),
    "3D": (
        "3D",
        "Real runs combine them. The 3D pill is one common shape: tensor parallel across"
        " {plan.tp:int} cards on {cluster.intra_node_link_label}, {plan.pp:int} pipeline stages across"
        " the rest of the node, and data-parallel replicas across nodes when the rack is bigger than"
        " this one.",
    ),
}

# The EP pill's words on a page whose model picker offers no mixture of experts.
NO_EXPERTS = (
    "Expert parallelism spreads a mixture-of-experts model's experts over the cards; every model this"
    " page offers is dense. Build it with one, as in dtfilm page --models mixtral-8x7b."
)

SWITCHES_TEXT = (
    "CKPT",
    "Gradient checkpointing recomputes activations in the backward pass instead of storing them:"
    " the activation bar all but disappears, for {compute.recompute_overhead:part} more compute."
    " fp8 halves the weights again, though the fp32 master copy and the optimiser moments stay"
    " where they were.",
)

SMALL_PRINT = (
    "DP",
    "The numbers here are the first-order estimates an engineer writes on a whiteboard, not a profiler"
    " trace. Activation memory uses the Megatron estimate of"
    " {memory.activation_bytes_per_token_per_hidden:int} bytes per token per hidden unit per layer,"
    " which assumes FlashAttention has removed the sequence-squared term. Communication is counted as"
    " bytes and timed as NCCL runs it, over NVLink and every network card of a node, and overlapped"
    " with compute as the frameworks overlap it (the seeds' whiteboard, one link and no overlap, is a"
    " flag away). The CUDA context and NCCL's buffers are counted; the allocator's fragmentation and the"
    " framework's own memory are not, so a fit with less than 5% of the card to spare is a tight one."
    " fp8 keeps weights in one byte, and beside them the bf16 weight and a transposed fp8 copy that"
    " Transformer Engine's recipe keeps. The shape of the trade-offs survives all of that; the exact gigabyte"
    " does not.",
)

# "The maths": what each of the four formulas explains on the page.
MATHS_TEXT = {
    "bytes": (
        "DP",
        "The number behind \u201cPer card\u201d under data parallel: the {params:si} model is"
        " {state.total:GB} before a single activation is stored. Switch to fp32 and the weights and"
        " gradients double while the master copy goes, and the total stays the same: mixed precision"
        " shrinks activations and compute, not the parameter footprint.",
    ),
    "card": (
        "3D",
        "P is the parameter count, t the tensor-parallel degree, p the pipeline stages and s the FSDP"
        " shard count: one of them is above 1 on each pill, two under 3D. A is activation memory, which"
        " depends on how many layers the card holds and how many micro-batches are in flight.",
    ),
    "ring": (
        "FSDP_ONE",
        "Each of n cards sends and receives nearly twice the buffer B: once for the reduce-scatter, once"
        " for the all-gather. Data parallel does this on the gradients once per step. FSDP gathers"
        " forward and backward and reduce-scatters, so with one micro-batch \u201cComm / step\u201d reads"
        " {comm.fsdp_vs_dp:x} data parallel. Tensor parallel does it {comm.tp_exchanges.total:word} times"
        " per layer on an activation-sized buffer: small, but in the critical path of every layer.",
    ),
    "bubble": (
        "PP",
        "With p stages and m micro-batches, the pipeline spends p \u2212 1 slots filling and as many"
        " draining. Drag the micro-batch slider and the dead space in the timeline shrinks; the price is"
        " the activations of more micro-batches in flight on the first stages, up to p of them.",
    ),
}
