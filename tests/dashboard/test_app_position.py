"""Lesson 9 through AppTest: the RoPE pairing named and checked live, and the sidebar's causal
switch changing what the shuffle shows."""

import re

import pytest
from conftest import as_read, no_exception, open_page


def shown(at) -> str:
    """The page's prose as read, bold marks dropped."""
    return " ".join(as_read(m.value) for m in at.markdown).replace("**", "")


def pairing_table(at):
    frame = next(d.value for d in at.dataframe if "rotate_half on P q" in set(d.value.iloc[:, 0]))
    return frame.set_index(frame.columns[0])


def test_position_names_the_pairing_it_uses_and_the_other_one():
    at = open_page("pages/position.py")
    no_exception(at)
    text = shown(at)
    assert "interleaved" in text and "Meta's" in text and "apply_rotary_emb" in text
    assert "rotate_half" in text and "Hugging Face" in text and "first half with the second" in text


def test_position_checks_the_two_pairings_live():
    at = open_page("pages/position.py")
    no_exception(at)
    text = shown(at)
    other = float(re.search(r"other numbers: max \|difference\| ([\d.]+)", text)[1])
    assert other > 0.01
    assert "max |rotate_half(P q) − P (R q)| = 0.0000" in text
    assert re.search(r"the scores \(R q\)\(R k\)ᵀ of the two differ by at most 0\.0000", text)
    frame = pairing_table(at)
    same, other_rows = frame.iloc[[0, 1]].to_numpy(), frame.iloc[[2, 3]].to_numpy()
    assert abs(same[0] - same[1]).max() > 0.01  # the same features: other numbers
    assert abs(other_rows[0] - other_rows[1]).max() == 0.0  # after P: the same numbers
    assert "P = [0, 2, 1, 3]" in " ".join(c.value for c in at.caption)  # d_head = 4


def test_position_pairings_coincide_when_d_head_is_two():
    at = open_page("pages/position.py", d_model="4", heads="2")
    no_exception(at)
    assert "With d_k = 2 the two pairings are the same pair" in shown(at)


def test_position_pairings_at_one_token_say_nothing_turns():
    at = open_page("pages/position.py", T="1")
    no_exception(at)
    assert "Only position 0 is shown, where nothing turns" in shown(at)


def test_position_pairings_need_an_even_d_head():
    at = open_page("pages/position.py", d_model="6", heads="2")
    no_exception(at)
    assert any("pick an even head size d_k = d_model / H" in i.value for i in at.info)


@pytest.mark.parametrize("causal", ["true", "false"])
def test_position_causal_switch_sets_the_mask_of_the_row_by_row_shuffle(causal):
    at = open_page("pages/position.py", causal=causal)
    no_exception(at)
    text = shown(at)
    changed = re.search(r"Causal mask (on|off) \(the sidebar's switch\): (?:no mask, and )?"
                        r"(\d+) of (\d+) rows changed", text)  # fmt: skip
    assert changed is not None
    assert changed[1] == ("on" if causal == "true" else "off")
    n, T = int(changed[2]), int(changed[3])
    assert T == 6
    assert (n > 0) if causal == "true" else (n == 0)


def test_position_page_changes_with_the_causal_switch():
    on = shown(open_page("pages/position.py", causal="true"))
    off = shown(open_page("pages/position.py", causal="false"))
    assert on != off
