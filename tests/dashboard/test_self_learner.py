"""Issue 30: a self-learner alone. Each item's test (items 1 and 7's are in
test_questions_stay_put.py and test_worked_example.py)."""

import re

import pytest
from conftest import (
    APP,
    LESSON_PAGES,
    as_read,
    before_check,
    elements,
    no_exception,
    open_page,
    printed,
)


@pytest.mark.parametrize(
    "page, asked, needed",
    [
        # lesson 2's question 3 asks for the shape after q_all.view(B, T, H, C // H)
        # .transpose(1, 2): B, view and transpose were only in the objectives
        (
            "pages/multi_head.py",
            "q_all.view(B, T, H, C // H).transpose(1, 2)",
            ("view(B, T, H, C // H)", ".transpose(1, 2)", "batch"),
        ),
        # lesson 9's question 3 asks for a rotated q₀: the formula was only in its solution
        ("pages/position.py", "What is the rotated q₀?", ("q₀ cos θ − q₁ sin θ",)),
    ],
)
def test_item_2_what_a_question_needs_is_taught_above_it(page, asked, needed):
    at = open_page(page)
    no_exception(at)
    assert any(asked in str(text.value) for text in at.text)  # the question is asked
    shown = " ".join(text for element in before_check(at) for text in printed(element))
    assert [term for term in needed if term not in shown] == []


def test_item_4_the_shuffle_tables_say_they_have_no_mask_while_the_causal_switch_is_on():
    """Lesson 9's shuffle tables are computed without a mask while the sidebar's causal switch
    is on (the default), and nothing said so."""
    at = open_page("pages/position.py")
    no_exception(at)
    assert at.sidebar.toggle(key="causal").value
    words = [str(m.value) for m in at.markdown]
    assert any("**without any mask**" in w for w in words)
    assert "**Attn(X), no mask**" in words and "**Attn(P X), no mask**" in words


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_item_5_no_table_prints_none_for_an_empty_cell(page):
    """Given-value tables printed "None" where the question says the blocked keys are empty
    (lessons 3, 7, 8): every table with an empty cell says what it shows there."""
    at = open_page(page)
    no_exception(at)
    for frame in at.dataframe:
        if frame.value.isna().any(axis=None):
            assert frame.proto.HasField("placeholder"), (page, frame.value.head(2))


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_item_5_the_head_size_is_d_k_in_every_sentence(page):
    """Lessons 7 and 10 said "d_head" where every other lesson says d_k (code keeps its own
    names: the package's variables are d_head)."""
    at = open_page(page)
    no_exception(at)
    said = [
        text
        for element in elements(at.main)
        if element.type not in ("code",)
        for text in printed(element)
    ]
    assert [text for text in said if "d_head" in text] == []


@pytest.mark.parametrize("params", [{}, {"causal": "false"}])
def test_item_5_the_masked_weights_check_counts_what_it_checked(params):
    """ "Masked weights are exactly 0 (0 are not)" read as a riddle: the check now says how
    many masked weights it checked, or that nothing is masked."""
    at = open_page("pages/step_by_step.py", **params)
    no_exception(at)
    (line,) = [m.value for m in at.markdown if "Every row of the weights sums to 1" in m.value]
    assert "(0 are not)" not in line
    if params:
        assert "No key is masked here" in line
    else:  # causal, T = 6, 2 heads: 15 future keys a head
        assert "Masked weights are exactly 0 (all 30 of them)" in line


def test_item_5_drill_6_is_not_lesson_3s_question_1_again():
    """Drill 6 repeated lesson 3's question 1 word for word ("which keys may query i NOT
    attend to?"): it now asks for a key's column of the mask."""
    masking = open_page("pages/masking.py")
    drills = open_page("pages/drills.py")
    asked = {str(t.value).split(" (")[0] for t in masking.text}
    drill = next(str(t.value) for t in drills.text if "NOT attend" in str(t.value))
    assert "which queries may NOT attend to key" in drill
    assert drill.split(" (")[0] not in asked


def check_box(at, page: str, number: int):
    name = page.removeprefix("pages/").removesuffix(".py")
    return next(b for b in at.text_input if str(b.key).startswith(f"check_{name}_{number}_"))


def errors_outside_expanders(at) -> list[str]:
    """The errors shown without opening anything more (Check yourself is opened)."""
    inside = {id(e) for x in at.expander if x.label != "Check yourself" for e in elements(x)}
    return [as_read(e.value) for e in at.error if id(e) not in inside]


@pytest.mark.parametrize("page", ["pages/step_by_step.py", "pages/drills.py"])
def test_item_7_a_first_wrong_answer_gets_a_hint_and_a_second_try(page):
    """A first wrong answer showed the answer and the full working at once: now a hint and a
    second try; the answer and the working after a second wrong answer, or on request."""
    at = open_page(page)
    no_exception(at)
    box = (
        check_box(at, page, 1)
        if page != "pages/drills.py"
        else next(b for b in at.text_input if str(b.key).startswith("drill_score_"))
    )
    key = box.key
    box.input("123.4567").run()
    no_exception(at)
    shown = errors_outside_expanders(at)
    assert any("Hint:" in e and "Try again" in e for e in shown), shown
    assert not any("the answer is" in e for e in shown), shown
    (on_request,) = [x for x in at.expander if x.label == "Show the answer and the working"]
    assert any("the answer is" in as_read(e.value) for e in on_request.error)
    at.text_input(key=key).input("234.5678").run()
    shown = errors_outside_expanders(at)
    assert any("the answer is" in e for e in shown), shown
    assert not [x for x in at.expander if x.label == "Show the answer and the working"]


def test_item_8_lesson_1_shows_w_q_w_k_w_v():
    """W_q, W_k and W_v first appeared in lesson 5; lesson 1 shows them on request, as
    Q = X W_q uses them: X's table times W_q's gives Q's (to 4 decimals)."""
    import torch

    from dashboard.controls import Settings
    from dashboard.lessons import computed

    at = open_page("pages/step_by_step.py")
    no_exception(at)
    at.toggle(key="show_weights").set_value(True).run()
    no_exception(at)
    tables = [d.value for d in at.dataframe if str(d.value.columns[0]).startswith("in")]
    assert len(tables) == 4  # W_q, W_k, W_v, W_o
    W_q = torch.tensor(tables[0].iloc[:, 1:].to_numpy(dtype=float))
    shown = computed(Settings())
    q = shown.layer.W_q(shown.embedded.x).detach().double()  # (T, C)
    assert torch.allclose(shown.embedded.x.double() @ W_q, q, atol=5e-4)


def cookies_written(at) -> dict[str, tuple[str, int]]:
    """The cookies this run wrote (name: value, max-age seconds), read from their script."""
    found = {}
    for html in at.get("html"):
        for name, value, age in re.findall(
            r"(attention_\w+)=([^;]*); path=/; max-age=(\d+)", str(html.proto)
        ):
            found[name] = (value, int(age))
    return found


def test_item_6_a_right_answer_is_kept_and_the_home_page_says_where_to_go_on(monkeypatch, tmp_path):
    """The course forgot everything on a reload. A right answer is now kept in the browser's
    cookie, the whole copy (issue 51), and in the class store under the browser's learner
    token (the reload itself: the Chromium test); the home page's plan shows it, says where to
    go on, and Forget me deletes it, in the store and both cookies."""
    from dashboard.classroom.learners import ProgressStore
    from dashboard.classroom.progress_copy import decode
    from dashboard.progress import COOKIE_SECONDS

    url = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("ATTENTION_CLASS_DB", url)
    at = open_page("pages/step_by_step.py")
    no_exception(at)
    assert at.session_state["learner_token"] is None  # nothing kept before a right answer
    assert cookies_written(at) == {}
    question = at.session_state["check_pinned_step_by_step_1"]
    check_box(at, "pages/step_by_step.py", 1).input(question.answer_text).run()
    no_exception(at)
    token = at.session_state["learner_token"]
    count = len([b for b in at.text_input if str(b.key).startswith("check_step_by_step_")])
    kept = {"count:step_by_step": str(count), "right:step_by_step:1": "1"}
    assert ProgressStore(url).progress_of(token) == kept
    written = cookies_written(at)  # in the run that graded the answer
    assert written["attention_learner"] == (token, COOKIE_SECONDS)
    copy, seconds = written["attention_progress"]
    assert decode(copy) == kept and seconds == COOKIE_SECONDS
    at.switch_page("pages/home.py").run()
    no_exception(at)
    words = " ".join(str(m.value) for m in at.markdown)
    assert f"**1 · Step by step**: 1 of {count} answered right" in words
    assert any(link.label == "Go on: 1 · Step by step" for link in at.get("page_link"))
    at.button(key="forget_me").click().run()
    no_exception(at)
    assert ProgressStore(url).progress_of(token) == {}
    assert cookies_written(at) == {"attention_learner": ("", 0), "attention_progress": ("", 0)}
    assert "answered right" not in " ".join(str(m.value) for m in at.markdown)


def test_issue_51_progress_only_in_the_store_is_copied_into_the_browser(monkeypatch, tmp_path):
    """A learner from before the browser kept a copy: their progress is only in the store,
    under the token their cookie holds. The first page they open shows it and writes the
    cookie with it; a drill score taken later keeps the better of the two."""
    from streamlit.testing.v1 import AppTest

    from dashboard.classroom.learners import ProgressStore
    from dashboard.classroom.progress_copy import decode

    url = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("ATTENTION_CLASS_DB", url)
    store = ProgressStore(url)
    token = store.new_learner()
    before = {"count:masking": "3", "right:masking:2": "1", "drills:0": "6/6"}
    for item, value in before.items():
        store.record(token, item, value)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["learner_token"] = token  # what the browser's cookie held
    at.switch_page("pages/home.py")
    at.run()
    no_exception(at)
    words = " ".join(str(m.value) for m in at.markdown)
    assert "**3 · Masking**: 1 of 3 answered right" in words and "set 0: 6 / 6" in words
    assert decode(cookies_written(at)["attention_progress"][0]) == before
    at.run()
    assert cookies_written(at) == {}  # written once: the session's copy is the browser's now


def test_issue_42_item_10_the_kept_count_includes_the_answers_just_given(monkeypatch, tmp_path):
    """ "Kept in this browser from before: 3 of 4 answered right" while all four showed Right:
    the count was read before this rerun graded the answers. It is written after them."""
    url = f"sqlite:///{tmp_path / 'classroom.db'}"
    monkeypatch.setenv("ATTENTION_CLASS_DB", url)
    page = "pages/step_by_step.py"
    at = open_page(page)
    no_exception(at)
    count = len([b for b in at.text_input if str(b.key).startswith("check_step_by_step_")])
    for number in range(1, count + 1):
        question = at.session_state[f"check_pinned_step_by_step_{number}"]
        check_box(at, page, number).input(question.answer_text).run()
        no_exception(at)
        kept = [as_read(c.value) for c in at.caption if "Kept in this browser" in c.value]
        assert kept == [
            f"Kept in this browser: {number} of {count} answered right, today's answers "
            "included (the home page's course plan shows every lesson's)."
        ]


@pytest.mark.parametrize("text", [None, "Juliet: O Romeo, Romeo!", "abcdefgh"])
def test_issue_42_item_14_a_wrong_reading_of_the_induction_question_gets_named(text):
    """Lesson 12's question 3 answered with the earlier occurrence itself got "Count again
    from the definition": the hint now names that reading (and the query itself, and the
    character before the query), at the default text and two others; a number that is no
    reading still gets the definition's hint."""
    from attention.lm.reading import induction_question, twice
    from dashboard.views import real_model

    read = real_model.reading(real_model.TEXT_DEFAULT if text is None else text)
    drill = induction_question(twice(read.ids, 64))
    at = open_page("pages/real_model.py", **({} if text is None else {"rm_text": text}))
    no_exception(at)
    box = check_box(at, "pages/real_model.py", 3)
    earlier = int(drill.answer) - 1
    box.input(str(earlier)).run()
    no_exception(at)
    shown = errors_outside_expanders(at)
    assert any(f"{earlier} is the earlier" in e and "followed it. Try again" in e for e in shown), (
        shown
    )
    assert not any("Count again from the definition" in e for e in shown), shown
    query = int(drill.prompt.split("Query ")[1].split(" ")[0])
    assert drill.readings[1][0] == query and "the query itself" in drill.readings[1][1]
    at = open_page("pages/real_model.py", **({} if text is None else {"rm_text": text}))
    check_box(at, "pages/real_model.py", 3).input("63").run()  # no reading gives 63
    shown = errors_outside_expanders(at)
    assert any("Count again from the definition" in e for e in shown), shown
