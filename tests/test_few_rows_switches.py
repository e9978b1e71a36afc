"""The rows bounds' tuning switches (``_C._set_norm_few_rows``, ``_C._set_norm_whole_rows``,
``_C._set_softmax_few_rows``; tests/test_norm_few_rows.py, test_norm_whole_rows.py and
test_softmax_few_rows.py force them): a negative bound other than -1 is refused with the
switch's name, and each returns the override it replaces, -1 (the rule) by default."""

import pytest


@pytest.mark.parametrize("name", ["_set_norm_few_rows", "_set_norm_whole_rows",
                                  "_set_softmax_few_rows"])
def test_the_switch_rejects_a_negative_bound_and_restores(name):
    pytest.importorskip("torch_memopt._C")
    from torch_memopt import _C

    switch = getattr(_C, name)
    expected = rf"{name}: expected rows >= 0, or -1 \(the rule\), got -2"
    with pytest.raises(ValueError, match=expected):
        switch(-2)
    previous = switch(5)
    assert previous == -1, "the rule is the default"
    assert switch(previous) == 5
