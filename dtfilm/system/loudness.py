"""Loudness: each chapter's sound brought to −16 LUFS integrated (ITU-R BS.1770, by pyloudnorm)
with its true peak (oversampled to 192 kHz) held under −1 dBTP by a look-ahead limiter.

Piper's raw voice measures about −26 LUFS with peaks a few dB under full scale, so the gain it
needs would clip without the limiter; AAC adds a little overshoot, so the limiter's ceiling sits
below the target peak. Applied to the decoded PCM of a whole chapter, once.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyloudnorm
from scipy.ndimage import convolve1d, minimum_filter1d
from scipy.signal import firwin, lfilter

TARGET_LUFS = -16.0
TARGET_PEAK_DBTP = -1.0
CEILING_DBTP = -2.5  # the limiter's ceiling: room for AAC's overshoot (measured up to 1 dB)
TRUE_PEAK_RATE = 192_000  # BS.1770's true peak: 4x oversampling of 48 kHz sound
LOOKAHEAD_SECONDS = 0.005
RELEASE_SECONDS = 0.08


def integrated_lufs(samples: np.ndarray, rate: int) -> float:
    return float(pyloudnorm.Meter(rate).integrated_loudness(samples))


def oversampling(rate: int) -> int:
    """How many times sound at `rate` is oversampled to find its true peak: to TRUE_PEAK_RATE,
    never under 4. BS.1770's 4x is for 48 kHz: at 24 kHz, 4x could miss up to 0.7 dB of a peak
    between samples (a tone near 12 kHz, 8 points a cycle), and 8x up to 0.2 dB, as 4x at 48 kHz."""
    return max(4, -(-TRUE_PEAK_RATE // rate))


def true_peak_dbtp(samples: np.ndarray, rate: int) -> float:
    """The highest peak of the signal oversampled (BS.1770's true peak), in dB."""
    if not len(samples):
        return -np.inf
    return float(20 * np.log10(sample_peaks(samples, rate).max() + 1e-12))


PEAK_PIECE = 1 << 20  # samples (22 s): longer sound is oversampled in pieces, one per core


def sample_peaks(samples: np.ndarray, rate: int) -> np.ndarray:
    """Each sample's true peak: the largest of its oversampled values (BS.1770), those of
    scipy's resample_poly(samples, n, 1) for n = oversampling(rate). Each of the n phases is
    one short filter run over the samples (scipy.ndimage), which takes half the time of
    interleaving the oversampled signal; long sound is cut into pieces filtered at once on the
    cores (the filter lets go of the GIL), each with the samples its edges reach, so every peak
    is the one the whole signal has."""
    count, factor = len(samples), oversampling(rate)
    pieces = min(os.cpu_count() or 1, -(-count // PEAK_PIECE))
    if pieces <= 1:
        return _phase_peaks(samples, factor)
    peaks = np.empty(count, dtype=samples.dtype)
    reach = len(_phase_taps(factor)[0]) // 2
    bounds = np.linspace(0, count, pieces + 1).astype(int)

    def piece(first: int, last: int) -> None:
        lo, hi = max(0, first - reach), min(count, last + reach)
        peaks[first:last] = _phase_peaks(samples[lo:hi], factor)[first - lo : last - lo]

    with ThreadPoolExecutor(pieces) as pool:
        list(pool.map(piece, bounds[:-1], bounds[1:]))
    return peaks


def _phase_peaks(samples: np.ndarray, factor: int) -> np.ndarray:
    peaks = np.zeros(len(samples), dtype=samples.dtype)
    for taps in _phase_taps(factor):
        np.maximum(peaks, np.abs(convolve1d(samples, taps.astype(samples.dtype), mode="constant")), out=peaks)
    return peaks


@functools.cache
def _phase_taps(factor: int) -> list[np.ndarray]:
    """resample_poly's interpolator for `factor` times (a Kaiser-windowed sinc of 20 * factor + 1
    taps, 10 * factor each side), split into one centred filter per output phase: phase k of
    sample n is the sum over j of taps[factor * j + k + 10 * factor] * x[n - j]."""
    half = 10 * factor
    taps = firwin(2 * half + 1, 1.0 / factor, window=("kaiser", 5.0)) * factor
    reach = half // factor
    phases = []
    for phase in range(factor):
        kernel = np.zeros(2 * reach + 1)
        for j in range(-reach, reach + 1):
            if 0 <= factor * j + phase + half < len(taps):
                kernel[j + reach] = taps[factor * j + phase + half]
        phases.append(kernel)
    return phases


def limited(
    samples: np.ndarray, rate: int, ceiling_db: float = CEILING_DBTP, peaks: np.ndarray | None = None
) -> np.ndarray:
    """The signal with its true peaks held under `ceiling_db`: a gain that falls ahead of each
    peak (look-ahead) and recovers slowly after it (release). `peaks`: the signal's
    sample_peaks, when known (oversampling is the costly part)."""
    ceiling = 10 ** (ceiling_db / 20)
    peaks = sample_peaks(samples, rate) if peaks is None else peaks
    needed = np.minimum(1.0, ceiling / np.maximum(peaks, 1e-12))
    window = max(1, int(LOOKAHEAD_SECONDS * rate))
    held = minimum_filter1d(needed, size=2 * window + 1, mode="nearest")
    alpha = np.exp(-1.0 / (RELEASE_SECONDS * rate))
    # a one-pole release towards 1, never above what the peaks need
    released = 1.0 - lfilter([1 - alpha], [1, -alpha], 1.0 - held)
    gain = np.minimum(held, released)
    return samples * gain


LOUDNESS_TOLERANCE = 0.2  # LU
LOUDNESS_TRIES = 5
# The first try's gain is what the unlimited sound needs, so its miss is what the limiter took;
# the second aims at the film's narration's slope at −16 (0.36 to 0.44 LU a dB in dp, cp and
# ledger), so it usually lands, and a sound the limiter barely touches lands on the third.
FIRST_LOUDNESS_PER_DB = 0.4


def normalised(samples: np.ndarray, rate: int) -> tuple[np.ndarray, float]:
    """The chapter's sound within LOUDNESS_TOLERANCE of TARGET_LUFS, its true peak limited;
    and the gain applied (dB).

    The limiter takes loudness away as the gain rises: over the film's narration each dB of gain
    added 0.36 to 0.44 LU at −16 (it limits peaks by some 10 dB there). Adding the miss as gain
    stopped three tries later 0.6 to 0.8 LU short; each try now aims along the slope the tries
    so far measured (the secant of the last two), which lands in two or three."""
    if not len(samples) or not np.any(samples):
        return samples, 0.0
    peaks = sample_peaks(samples, rate)  # oversampled once: a gain scales the peaks with the signal
    gain_db = TARGET_LUFS - integrated_lufs(samples, rate)
    tried: list[tuple[float, float]] = []  # (gain dB, loudness LUFS) of each try
    out = samples
    for _ in range(LOUDNESS_TRIES):
        gain = 10 ** (gain_db / 20)
        out = limited(samples * gain, rate, peaks=peaks * gain)
        tried.append((gain_db, integrated_lufs(out, rate)))
        miss = TARGET_LUFS - tried[-1][1]
        if abs(miss) < LOUDNESS_TOLERANCE:
            break
        gain_db += miss / _loudness_per_db(tried)
    return out, tried[-1][0]


def _loudness_per_db(tried: list[tuple[float, float]]) -> float:
    """LU of loudness a dB of gain adds, from the last two tries (FIRST_LOUDNESS_PER_DB before a
    second): between a tenth and one, as a limiter gives (never more than the gain, never
    nothing)."""
    if len(tried) < 2 or tried[-1][0] == tried[-2][0]:
        return FIRST_LOUDNESS_PER_DB
    (gain_a, lufs_a), (gain_b, lufs_b) = tried[-2:]
    return float(np.clip((lufs_b - lufs_a) / (gain_b - gain_a), 0.1, 1.0))
