"""The one way settings are checked: what each range allows, and the one-line message it gives."""

import math

import pytest

from minibert.validation import NONNEGATIVE, NONNEGATIVE_INT, POSITIVE, POSITIVE_INT, UNIT_INTERVAL, Range, check

CASES = [  # (range, allowed values, refused values, description)
    (POSITIVE_INT, [1, 7, 10**12], [0, -1, 1.0, True, "3", None], "a positive integer"),
    (NONNEGATIVE_INT, [0, 5], [-1, 0.0, False], "an integer >= 0"),
    (POSITIVE, [1e-9, 2, 3.5], [0, -0.1, math.inf, math.nan, True], "a positive number"),
    (NONNEGATIVE, [0, 0.0, 4], [-1e-12, math.nan], "a number >= 0"),
    (UNIT_INTERVAL, [0, 0.15, 1, 1.0], [1.0000001, -0.1, math.nan, True], "a number in [0, 1]"),
    (Range(low=1), [1, 3.0], [0.999, math.inf], "a number >= 1"),
    (Range(low=0, high=2**32 - 1, integer=True), [0, 2**32 - 1], [2**32, -1], "an integer in [0, 4294967295]"),
]


@pytest.mark.parametrize("allowed, good, bad, text", CASES, ids=[c[3] for c in CASES])
def test_each_range_allows_exactly_what_it_says(allowed, good, bad, text):
    assert str(allowed) == text
    assert all(allowed.allows(v) for v in good)
    assert not any(allowed.allows(v) for v in bad)


def test_a_refused_setting_is_one_line_naming_the_setting_the_value_and_what_is_allowed():
    with pytest.raises(ValueError) as err:
        check("EncoderConfig", "width", -3, POSITIVE_INT)
    assert str(err.value) == "EncoderConfig.width=-3 is not allowed: it must be a positive integer"
