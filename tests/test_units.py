from __future__ import annotations

import pytest

from dtfilm.units import format_quantity, parse_count


@pytest.mark.parametrize(
    ("text", "value"),
    [("7e9", 7e9), ("7B", 7e9), ("512M", 512e6), ("1T", 1e12), ("6.74B", 6.74e9), (4096, 4096.0)],
)
def test_parse_count(text, value):
    assert parse_count(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["seven", "7Q", "", "1e"])
def test_parse_count_rejects(text):
    with pytest.raises(ValueError):
        parse_count(text)


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (112e9, "GB", "112\u00a0GB"),
        (24.5e9, "GB", "24.5\u00a0GB"),
        (14e9, "GB", "14\u00a0GB"),
        (1.75e9, "GB", "1.75\u00a0GB"),
        (6.5e12, "GB", "6,500\u00a0GB"),
        (16384, "int", "16,384"),
        (7e9, "si", "7B"),
        (1.63, "x", "1.63×"),
        (0.467, "%", "46.7%"),
        (8.5e8, "years", "26.9\u00a0years"),
        (4.2e23, "sci", "4.2\u00a0×\u00a010²³"),
        (9.996e22, "sci", "1\u00a0×\u00a010²³"),
    ],
)
def test_format_quantity(value, unit, shown):
    assert format_quantity(value, unit) == shown
