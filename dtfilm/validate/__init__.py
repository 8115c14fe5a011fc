"""`dtfilm validate`: the cost model checked against a real engine, PyTorch distributed on CPU.

model.py builds a small LLaMA-shaped transformer whose parameter count is the cost model's
formula; ranks.py trains it under DDP, ZeRO-1, FSDP, tensor, pipeline, context and expert parallelism (experts.py)
(ring.py: ring attention) on N gloo processes and measures each rank's state and the collectives
PyTorch issued; overlap.py times DDP's bucket all-reduces against the backward pass; compare.py
asks the cost model the same questions; run.py prints the table and writes the report. Only
this package imports torch (the `validate` extra); rendering never does.
"""

# Every strategy `dtfilm validate` runs, in its report's order (no torch imported here).
STRATEGIES = ("ddp", "zero1", "fsdp", "tp", "pp", "cp", "ep", "overlap")
