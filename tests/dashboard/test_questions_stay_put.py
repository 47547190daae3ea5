"""A question stays as it was when it appeared (issue 30, item 1): following it (switching the
mask, moving the padding slider) neither rewrites it nor regrades an answer typed to it; the
page then offers a new question at its settings."""

import re

from conftest import as_read, by_hand, no_exception, open_page


def check_prompts(at) -> list[str]:
    """The Check-yourself prompts, in order (each is drawn with st.text)."""
    return [t.value for t in at.text if t.value.startswith(("Switch", "Still", "With", "Which"))]


def verdicts(at) -> list[str]:
    return [as_read(e.value) for e in (*at.success, *at.error)]


def check_box(at, number: int):
    return next(
        b for b in at.text_input if str(b.key).startswith(f"check_worked_example_{number}_")
    )


def test_lesson_5_question_survives_the_switch_it_asks_for():
    at = open_page("pages/worked_example.py")  # the worked example: causal on
    no_exception(at)
    asked = at.session_state["check_pinned_worked_example_1"]
    assert asked.prompt.startswith("Switch the causal mask off")
    at.toggle(key="causal").set_value(False).run()  # the learner does what it says
    no_exception(at)
    assert at.session_state["check_pinned_worked_example_1"] == asked
    assert any(t.value == asked.prompt for t in at.text)
    check_box(at, 1).input(asked.answer_text).run()
    assert any(v.startswith("Right") for v in verdicts(at)), verdicts(at)
    assert any(b.label == "A new question at these settings" for b in at.button)
    at.button(key="check_renew_worked_example_1").click().run()
    renewed = at.session_state["check_pinned_worked_example_1"]
    assert renewed.prompt.startswith("Switch the causal mask on")


def test_lesson_5_by_hand_answer_is_graded_at_its_own_settings():
    """An answer typed with the mask on keeps its question and its grade when the mask is
    switched: the question gives its own numbers, and a new question is offered, not forced."""
    at = open_page("pages/worked_example.py")
    typed_key = by_hand(at, 2).key
    by_hand(at, 2).input("0.3606").run()
    before = verdicts(at)
    assert any(v.startswith("Right") for v in before), before
    at.toggle(key="causal").set_value(False).run()
    no_exception(at)
    assert by_hand(at, 2).key == typed_key and by_hand(at, 2).value == "0.3606"
    assert verdicts(at) == before
    assert any(b.label == "A new question at these settings" for b in at.button)
    at.button(key="check_renew_worked_example_hand_2").click().run()
    assert by_hand(at, 2).value == ""
    assert at.session_state["check_pinned_worked_example_hand_2"].answer_text == "0.3410"


def test_lesson_3_padding_question_survives_setting_the_padding_it_names():
    at = open_page("pages/masking.py")
    asked = at.session_state["check_pinned_masking_1"]
    pad = int(re.search(r"the last (\d+) tokens? as padding", asked.prompt).group(1))
    at.select_slider(key="pad").set_value(pad).run()
    no_exception(at)
    assert at.session_state["check_pinned_masking_1"] == asked
    assert any(t.value == asked.prompt for t in at.text)
    box = next(b for b in at.text_input if str(b.key).startswith("check_masking_1_"))
    box.input(asked.answer_text).run()
    assert any(v.startswith("Right") for v in verdicts(at)), verdicts(at)
