"""dp's and tp's pacing marks: what the voice names appears as it names it (dry runs of one shot)."""

from __future__ import annotations

import dataclasses

from dtfilm.storyboard import load_chapter
from dtfilm.storyboard.marks import mark_seconds
from tests.conftest import ROOT


def _first_seen(chapter_id: str, beat: str) -> tuple[dict[str, float], dict[str, float]]:
    """Each text of shot `beat`, drawn alone, with when it first shows (seconds into the shot),
    and when the voice reaches each of the shot's marks."""
    from dtfilm.check.inspect import dry_run
    from dtfilm.onscreen.layout import texts_on_screen
    from dtfilm.scene import LEAD_IN_SECONDS, narration_track

    chapter = load_chapter(chapter_id, {}, ROOT)
    shot = next(s for s in chapter.shots if s.beat == beat)
    seen: dict[str, float] = {}

    def log(scene, _beat: str) -> None:
        for text in texts_on_screen(scene):
            seen.setdefault(text.original_text, scene.time - scene.beat_start)

    dry_run(dataclasses.replace(chapter, shots=(shot,)), None, [log])
    audio = narration_track(chapter, chapter.film.voice).get(beat)
    spoken = [(s.start, s.end) for s in audio.sentences] if audio else None
    lead = LEAD_IN_SECONDS if audio else 0.0
    marks = {name: lead + t for name, t in mark_seconds(shot.narration.text, shot.marks, spoken).items()}
    return seen, marks


def _when(seen: dict[str, float], *words: str) -> float:
    return min(t for text, t in seen.items() if all(w in text for w in words))


def test_tp_counts_its_all_reduces_on_screen_as_the_voice_counts_them():
    # tp:stalls held one picture for 11.9 s while the voice counted a step's all-reduces; the
    # count now builds under the first row: a layer's times layers and micro-batches at [layers],
    # the step's total after [count] and before the voice moves on to the stall ([stall]).
    seen, marks = _first_seen("tp", "stalls")
    product = _when(seen, "a layer ×", "micro-batches")
    total = _when(seen, "= ", "all-reduces a step")
    assert marks["layers"] <= product < marks["count"]
    assert marks["count"] <= total < marks["stall"]


def test_dp_copies_show_the_batch_shared_then_its_gradients_added_up():
    # dp:copies held still for 10.6 s through the batch, the micro-batches and accumulation;
    # the batch now shows at [batch], the micro-batches at [micro], their sum at [accumulate].
    seen, marks = _first_seen("dp", "copies")
    assert marks["batch"] <= _when(seen, "the batch") < marks["micro"]
    assert marks["micro"] <= _when(seen, "micro-batches a card") < marks["accumulate"]
    assert marks["accumulate"] <= _when(seen, "added up, then")
