"""The six strategies in words (seed 001, sections 3 and 4): what each shards, how it
communicates, what it solves, where it can live, and the chapter that shows it.

Words only: no numbers here, so the screen can show them as they are. The figures beside
them on screen come from the cost model.
"""

from __future__ import annotations

from dataclasses import dataclass

from dtfilm.cost.hardware import Link

# Where a strategy's traffic can live, widest link first (seed 001, section 4.1).
TIERS = ("nvlink", "infiniband", "ethernet")


def tier_of(link: Link) -> str:
    """Which of seed 001's bandwidth tiers a link belongs to: inside a node, between nodes,
    or Ethernet shared by a node."""
    if not link.between_nodes:
        return "nvlink"
    return "ethernet" if link.shared_by_node else "infiniband"


@dataclass(frozen=True)
class Strategy:
    key: str
    name: str
    shards: str  # what it cuts
    talks: str  # how it communicates, in plain words: the film names the collectives in dp (glossary.yaml)
    solves: str  # which wall it answers
    slicing: str  # how the loaf is drawn: copy, shard, columns, rows, tokens, experts
    lives_on: tuple[str, ...]  # link tiers its traffic can cross
    chapter: str  # the chapter id that shows it ("" when the film has none yet)

    @property
    def called(self) -> str:
        """The strategy as the voice names it ("context parallelism", "FSDP"), capitalised: the
        table's short name ("Context parallel") fits a column, not a sentence."""
        return CALLED.get(self.key, self.name.replace("parallel", "parallelism"))


# what the voice calls each strategy where the table's name is not it (the ledger's map names its
# tiles so, as the voice names them: "then context parallelism, the sequence")
CALLED = {"fsdp": "FSDP", "cp": "Context parallelism"}

STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        "dp",
        "Data parallel",
        "the batch, not the model",
        "gradients summed on every card, every step",
        "won't finish",
        "copy",
        ("nvlink", "infiniband", "ethernet"),
        "dp",
    ),
    Strategy(
        "fsdp",
        "ZeRO / FSDP",
        "optimizer state, gradients, weights",
        "weights gathered, gradients scattered",
        "won't fit",
        "shard",
        ("nvlink", "infiniband"),
        "fsdp",
    ),
    Strategy(
        "tp",
        "Tensor parallel",
        "every layer's matrices, down the middle",
        "partial sums joined in every layer",
        "a layer too big",
        "columns",
        ("nvlink",),
        "tp",
    ),
    Strategy(
        "pp",
        "Pipeline parallel",
        "the layers, by depth",
        "activations between stages",
        "too many layers",
        "rows",
        ("nvlink", "infiniband"),
        "pp",
    ),
    Strategy(
        "cp",
        "Context parallel",  # (not Megatron's sequence parallelism, tensor parallelism's companion: tp)
        "the sequence, by tokens",
        "attention blocks around a ring",
        "a sequence too long",
        "tokens",
        ("nvlink", "infiniband"),
        "cp",
    ),
    # The sixth (issue 60): a mixture of experts' experts spread over the cards; its traffic is
    # an all-to-all, each token sent to its experts' cards and back. Its chapter, `ep`, is the
    # film's where film.yaml lists it; the ledger's map draws the strategy either way.
    Strategy(
        "ep",
        "Expert parallel",
        "a mixture of experts' experts",
        "each token sent to its experts' cards and back",
        "too many experts",
        "experts",
        ("nvlink", "infiniband"),
        "ep",
    ),
)
BY_KEY = {s.key: s for s in STRATEGIES}

# What lives on each tier, in seed 001's words (section 4.1).
TIER_NOTES = {
    "nvlink": "inside a node: tensor parallel lives here",
    "infiniband": "between nodes: pipeline and data parallel",
    "ethernet": "data parallel only, an exchange a step",
}

# The groups of a combined plan, as the 3D chapter names them.
GROUP_NAMES = {"tp": "Tensor parallel", "cp": "Context parallel", "pp": "Pipeline", "dp": "Data parallel"}

# Seed 001's decision tree (section 4.2): a question, the branch a "yes" ends in, and its
# answer; the last row is where every "no" ends. The planner names the branch it took.
DECISION_TREE: tuple[tuple[str, str | None, str], ...] = (
    ("Does a single card hold the full training state?", "ddp", "DDP, the simple first choice"),
    ("Does it fit when the state is sharded over the data-parallel cards?", "fsdp", "FSDP / ZeRO"),
    (
        "Still too big: split the layers. Tensor parallel inside a node, pipeline stages across nodes,"
        " context parallel for long sequences.",
        None,
        "3D parallelism",
    ),
)
# Where the last row ends, by the planner's branch: seed 001's "Where is the bottleneck?" ends
# in "Sequence too long" when only plans that split the sequence fit.
TREE_ENDS = {"3d": "3D parallelism", "cp": "Sequence too long: context parallel"}
# The last question as the branch asks it: where the sequence is too long the planner splits it,
# and may keep the layers whole (the cp chapter's pick at 512K tokens splits no layer).
TREE_LAST_QUESTIONS = {
    "cp": "Still too big: the sequence is too long. Split it across cards (context parallel), and the layers"
    " too where that is faster.",
}
