"""Every row of docs/bad_input.md: the input, and what the student gets."""

import re
from pathlib import Path

import pytest
import torch
from conftest import APP, LESSON_PAGES, as_read, by_hand, no_exception, open_page, table
from streamlit.testing.v1 import AppTest

from attention import scaled_dot_product_attention
from attention.check_yourself.worked_example import worked_example_by_hand
from attention.drills import Grade, grade
from attention.inputs import parse_matrix
from attention.scaling import random_scores, softmax_saturation

DOC = Path(__file__).resolve().parents[2] / "docs" / "bad_input.md"


def sidebar_warnings(at) -> list[str]:
    """The sidebar's warnings as a student reads them (markdown escapes removed)."""
    return [as_read(w.value) for w in at.sidebar.warning]


def no_html(at) -> None:
    assert not any(m.proto.allow_html for m in at.markdown), "markdown rendered as HTML"


def test_bad_input_every_documented_row_has_a_test():
    ids = re.findall(r"^\| ([a-z]+-[a-z-]+) \|", DOC.read_text(), re.MULTILINE)
    tested = {
        name.removeprefix("test_").replace("_", "-")
        for name in globals()
        if name.startswith("test_") and name != "test_bad_input_every_documented_row_has_a_test"
    }
    assert ids and set(ids) <= tested, sorted(set(ids) - tested)


def test_url_missing():
    at = open_page("pages/step_by_step.py")
    no_exception(at)
    assert sidebar_warnings(at) == []
    assert at.sidebar.slider(key="T").value == 6
    assert at.sidebar.select_slider(key="heads").value == 2


@pytest.mark.parametrize(
    "params, words",
    [
        ({"T": "65"}, "The link's T=65 is not a whole number from 1 to 64: using 6."),
        ({"d_model": "1"}, "d_model=1 is not a whole number"),
    ],
)
def test_url_out_of_range(params, words):
    at = open_page("pages/step_by_step.py", **params)
    no_exception(at)
    assert any(words in w for w in sidebar_warnings(at))
    assert at.sidebar.slider(key="T").value == 6 and at.sidebar.slider(key="d_model").value == 8


@pytest.mark.parametrize("params", [{"T": "banana"}, {"seed": "1.5"}, {"causal": "maybe"}])
def test_url_wrong_type(params):
    at = open_page("pages/step_by_step.py", **params)
    no_exception(at)
    (key,) = params
    assert any(f"The link's {key}=" in w for w in sidebar_warnings(at))
    assert len(at.get("vega_lite_chart")) == 11


def test_url_unknown():
    at = open_page("pages/step_by_step.py", zoom="3")
    no_exception(at)
    assert any("Unknown link parameter zoom ignored" in w for w in sidebar_warnings(at))
    assert "zoom" not in at.query_params


def test_url_heads():
    """A count that does not divide d_model stays in the link as asked; the sidebar says which
    count the page uses, and the page uses it."""
    at = open_page("pages/step_by_step.py", d_model="6", heads="4")
    no_exception(at)
    assert sidebar_warnings(at) == []
    (info,) = [i.value for i in at.sidebar.info]
    assert (
        info
        == "H = 4 does not divide d_model = 6: the page uses H = 3, the nearest count that does."
    )
    assert at.sidebar.select_slider(key="heads").value == 4  # what the link asked
    assert any("(H, T, T) = (3, 6, 6)" in m.value for m in [*at.markdown, *at.caption])


@pytest.mark.parametrize("heads", ["0", "17", "two", "2.5"])
def test_url_heads_unreadable(heads):
    at = open_page("pages/step_by_step.py", heads=heads)
    no_exception(at)
    assert any(f"heads={heads}" in w and "using 2." in w for w in sidebar_warnings(at))


@pytest.mark.parametrize("params", [{"T": "`**x**`"}, {"src": "<script>"}])
def test_url_markup(params):
    at = open_page("pages/step_by_step.py", **params)
    no_exception(at)
    no_html(at)
    (message,) = [w.value for w in at.sidebar.warning]
    # every markdown character of the value is escaped: it reads as typed, never as markup
    assert not re.search(r"(?<!\\)[`*<>]", message), message
    (value,) = params.values()
    assert value in as_read(message)


@pytest.mark.parametrize("text", [""])
def test_text_empty(text):
    at = open_page("pages/step_by_step.py", src="sentence", text=text)
    no_exception(at)
    assert [e.value for e in at.error] == [
        "Nothing to show: the sentence has no tokens: type at least one word."
    ]
    assert at.sidebar.slider(key="T").value == 6  # the sidebar is still there


def test_text_whitespace():
    at = open_page("pages/step_by_step.py", src="sentence", text="   \n\t")
    no_exception(at)
    assert any("no tokens" in e.value for e in at.error)


def test_text_long():
    at = open_page("pages/step_by_step.py", src="sentence", text="word " * 2000)
    no_exception(at)
    assert any("only the first 1000 are used" in w for w in sidebar_warnings(at))
    assert any("only the first 6 are used" in i.value for i in at.info)
    assert len(table(at.dataframe[0])) == 6


def sentence_labels(text: str) -> list[str]:
    at = open_page("pages/step_by_step.py", src="sentence", text=text, T="16")
    no_exception(at)
    no_html(at)
    return list(table(at.dataframe[7]).index)


def test_text_emoji():
    assert sentence_labels("I ❤ 🍕 pizza") == ["I", "❤", "🍕", "pizza"]


def test_text_rtl():
    assert sentence_labels("שלום עולם") == ["שלום", "עולם"]


def test_text_html():
    assert sentence_labels("<script>alert(1)</script>")[:4] == ["<#1", "script#1", ">#1", "alert"]


def test_text_markdown():
    assert sentence_labels("**x** _y_") == ["*#1", "*#2", "x", "*#3", "*#4", "_y_"]


def matrix_error(rows) -> str:
    with pytest.raises(ValueError) as error:
        parse_matrix(rows, max_rows=3, max_cols=2)
    return str(error.value)


def test_matrix_blank():
    assert "row 2, column 1 is blank" in matrix_error([[1, 2], [None, 3], [4, 5]])


def test_matrix_text():
    assert "row 1, column 2 is not a number" in matrix_error([[1, "abc"], [2, 3], [4, 5]])


def test_matrix_nan():
    assert "is blank or NaN" in matrix_error([[1, float("nan")], [2, 3], [4, 5]])


def test_matrix_inf():
    assert "is infinite" in matrix_error([[1, 2], [2, "inf"], [4, 5]])


def test_matrix_huge():
    assert "is too large (limit ±10000)" in matrix_error([[1, 2], [2, 1e30], [4, 5]])


def test_matrix_ragged():
    assert "row 2 has 1 numbers but row 1 has 2" in matrix_error([[1, 2], [3], [4, 5]])


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_extreme_smallest(page):
    at = open_page(page, T="1", d_model="2", heads="1", seed="0", causal="false")
    no_exception(at)
    assert not at.error
    if page == "pages/masking.py":
        assert any("a single token cannot be padding" in c.value for c in at.caption)


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_extreme_largest(page):
    at = open_page(page, T="64", d_model="256", heads="16", seed="99999")
    no_exception(at)
    assert not at.error and at.get("vega_lite_chart")


@pytest.mark.parametrize("tau", [0.01, 10.0])
def test_extreme_temperature(tau):
    at = open_page("pages/why_sqrt_dk.py")
    at.select_slider(key="dk").set_value(1024)
    at.select_slider(key="tau").set_value(tau).run()
    no_exception(at)
    summary = at.dataframe[1].value
    assert not summary.isin(["NaN", "nan"]).any().any()
    result = softmax_saturation(random_scores(8, 1024, 0), 1 / (tau * 32))
    assert all(map(lambda v: v == v, (result.entropy, result.max_weight, result.gradient_norm)))


def test_extreme_overflow():
    q = torch.full((1, 1, 2, 2), 1e30)
    with pytest.raises(ValueError, match=r"overflowed torch\.float32"):
        scaled_dot_product_attention(q, q, q)


def hand_question(causal: bool = True):
    """Lesson 5's By hand weight question, graded by the one grader every question uses."""
    from dashboard.controls import Settings
    from dashboard.lessons import computed

    example = computed(Settings(source="worked", causal=causal))
    return worked_example_by_hand(example.trace, example.labels)[1]


def test_answer_blank():
    at = open_page("pages/worked_example.py")
    by_hand(at, 2).set_value("   ").run()
    no_exception(at)
    assert not at.success and not at.error and not at.warning


def test_answer_printed():
    from dashboard.controls import Settings
    from dashboard.lessons import computed

    example = computed(Settings(source="worked"))
    output = worked_example_by_hand(example.trace, example.labels)[2]
    assert grade(output, "3.4991") == Grade("right", "Right: 3.4989.")
    assert output.working[-1] == (
        "From the unrounded numbers z_2[0] = 3.4989; the working's 3.4991 counts as right too."
    )


def test_answer_text():
    assert grade(hand_question(), "banana") == Grade("invalid", "“banana” is not a number.")


def test_answer_infinite():
    assert grade(hand_question(), "1e400") == Grade(
        "invalid", "That number is far too large: every answer here is well below a million."
    )


def test_answer_nan():
    assert grade(hand_question(), "nan") == Grade(
        "invalid", "NaN is not an answer: every number here is finite."
    )


@pytest.mark.parametrize("typed", ["0,3606", " 0.36 06 ", "٠٫٣٦٠٦", "０.３６０６"])
def test_answer_comma(typed):
    assert grade(hand_question(), typed).status == "right"


def test_answer_wrong():
    assert grade(hand_question(), "0.5") == Grade(
        "wrong", "Not quite: you gave 0.5000, the answer is 0.3606."
    )


def test_answer_right():
    assert grade(hand_question(), "0.3606") == Grade("right", "Right: 0.3606.")


DRILLS = "pages/drills.py"


def drill_messages(typed: str, box: int = 2) -> list[str]:
    """Type into one drill's answer box; every message the page then shows."""
    at = open_page(DRILLS)
    next(t for t in at.text_input if t.label == f"Your answer ({box})").input(typed).run()
    no_exception(at)
    no_html(at)
    return [e.value for e in (*at.success, *at.error, *at.warning)]


def test_drill_blank():
    assert drill_messages("   ") == []


def test_drill_text():
    assert any("is not a number" in m for m in drill_messages("banana"))
    assert any("not a list of whole numbers" in m for m in drill_messages("(a, b)", box=5))


def test_drill_nan():
    assert any("NaN is not an answer" in m for m in drill_messages("nan"))


@pytest.mark.parametrize("typed", ["inf", "1e300"])
def test_drill_huge(typed):
    assert any("far too large" in m for m in drill_messages(typed))


def test_drill_comma():
    assert any("Not quite" in m and "you gave \\-0\\.2500" in m for m in drill_messages("− 0,25"))
    assert any("one decimal separator" in m for m in drill_messages("1,234.5"))


@pytest.mark.parametrize("typed", ["$x$", "**x**"])
def test_drill_markup(typed):
    messages = drill_messages(typed)
    assert messages and all("\\$" in m or "\\*\\*" in m for m in messages), messages


@pytest.mark.parametrize("params", [{"bug": "typo"}, {"mode": "party"}, {"mystery": "abc"}])
def test_bug_url(params):
    at = open_page("pages/bug_hunt.py", **params)
    no_exception(at)
    ((key, value),) = params.items()
    messages = [as_read(w.value) for w in at.warning]
    assert any(f"{key}={value} " in m and "using the default" in m for m in messages), messages


@pytest.mark.parametrize(
    ("params", "escaped"),
    [
        ({"bug": "x\n\n![i](http://a.io/i.png) **B**"}, "\\!\\[i\\]\\(http\u2060\\:"),
        ({"mode": "x\n\n# BIG"}, "\\# BIG"),
        ({"mystery": "1\u202e2"}, "⟨U\\+202E⟩"),
    ],
)
def test_bug_url_markup(params, escaped):
    """The bug hunt's own link messages show a value as text: a blank line cannot end the
    message and start markdown (an image the browser would fetch), an override is written out."""
    at = open_page("pages/bug_hunt.py", **params)
    no_exception(at)
    no_html(at)
    (message,) = [w.value for w in at.warning]
    assert "\n" not in message and "\u202e" not in message and escaped in message, message


@pytest.mark.parametrize(
    ("typed", "escaped"),
    [("![i](http://a.io/x.png) **b**", "\\!\\[i\\]\\(http"), ("$x^2$ a", "\\$x\\^2\\$")],
)
def test_probe_markup(typed, escaped):
    """Lesson 6's probe names the tokens it does not know: as typed, never as markdown."""
    at = open_page("pages/what_heads_learn.py", learn="reverse")
    at.text_input(key="learn_probe_reverse").set_value(typed).run()
    no_exception(at)
    (message,) = [e.value for e in at.error]
    assert "not in this task's vocabulary" in as_read(message)
    assert typed.split()[0] not in message and escaped in message, message


def test_url_present():
    at = open_page("pages/step_by_step.py", present="maybe")
    no_exception(at)
    assert any("present= value must be 1" in w.value for w in at.sidebar.warning)
    assert len(at.get("vega_lite_chart")) == 11  # presenter mode off: every stage
    assert "present" not in at.query_params


@pytest.mark.parametrize(
    ("params", "used"),
    [({"T": "3.5"}, 3), ({"T": "63.99"}, 63), ({"seed": "1.5"}, 1), ({"d_model": "7.5"}, 7)],
)
def test_url_fraction(params, used):
    """Streamlit reads a fraction as its whole part: the message says that number."""
    at = open_page("pages/step_by_step.py", **params)
    no_exception(at)
    ((key, value),) = params.items()
    assert any(f"{key}={value}" in w and f"using {used}." in w for w in sidebar_warnings(at))
    assert at.session_state[key] == used


@pytest.mark.parametrize(("d_model", "heads"), [("7", "7"), ("9", "3"), ("255", "15")])
def test_url_odd_d_model(d_model, heads):
    """A valid link with an odd d_model: no message, and the linked heads are used."""
    at = open_page("pages/step_by_step.py", d_model=d_model, heads=heads)
    no_exception(at)
    assert sidebar_warnings(at) == [] and not at.sidebar.info
    assert at.session_state["heads"] == int(heads)


def test_url_repeated():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["T"] = ["70", "3"]
    at.switch_page("pages/step_by_step.py").run()
    no_exception(at)
    used = at.session_state["T"]
    assert f"The link gives T 2 times: using {used}." in sidebar_warnings(at)


def test_heads_move_with_d_model():
    """Moving d_model 8 -> 9 with 4 heads: one message, naming the count the page uses; the
    asked count stays, so moving back to 8 gives 4 heads again."""
    at = open_page("pages/step_by_step.py", heads="4")
    at.sidebar.slider(key="d_model").set_value(9).run()
    no_exception(at)
    assert sidebar_warnings(at) == []
    (info,) = [i.value for i in at.sidebar.info]
    assert "H = 4 does not divide d_model = 9: the page uses H = 3" in info
    assert at.session_state["heads"] == 4
    at.sidebar.slider(key="d_model").set_value(8).run()
    assert not at.sidebar.info and any(
        "(H, T, T) = (4, 6, 6)" in m.value for m in [*at.markdown, *at.caption]
    )


def edit(at, edited_rows=None, deleted_rows=()):
    """What the browser sends when a student edits lesson 5's encodings table."""
    key = f"encodings_{at.session_state['encodings_generation']}"
    at.session_state[key] = {
        "edited_rows": edited_rows or {},
        "added_rows": [],
        "deleted_rows": list(deleted_rows),
    }
    return at.run()


def x_table(at):
    return next(t for t in (table(d) for d in at.dataframe) if list(t.index) == ["x1", "x2", "x3"])


@pytest.mark.parametrize("typed", ["1e30", "-1e30", "1e-30x", "nan"])
def test_editor_refused(typed):
    """Nothing typed is clamped or rewritten silently: a refused entry is named, and the lesson
    keeps the last accepted encodings."""
    at = open_page("pages/worked_example.py")
    edit(at, {0: {"dim 0": "2.5"}})
    edit(at, {0: {"dim 0": typed}})
    no_exception(at)
    (error,) = [as_read(e.value) for e in at.error]
    assert error.startswith("row 1, column 1") and "keeps the last accepted" in error
    assert x_table(at).iloc[0, 0] == 2.5


def test_editor_deleted_row():
    at = open_page("pages/worked_example.py")
    edit(at, deleted_rows=[1])
    no_exception(at)
    assert any("needs 3 rows" in as_read(e.value) for e in at.error)


def test_editor_restore():
    """Restore brings back the classic encodings in the tables and in the editor itself."""
    at = open_page("pages/worked_example.py")
    edit(at, {0: {"dim 0": "2.5"}})
    assert x_table(at).iloc[0, 0] == 2.5
    next(b for b in at.button if b.label.startswith("Restore")).click().run()
    no_exception(at)
    assert x_table(at).iloc[0, 0] == pytest.approx(1.16)
    assert at.session_state["encodings_kept"][0][0] == pytest.approx(1.16)
    base = at.session_state["encodings_base"]
    assert base[0][0] == 1.16  # the fresh editor starts from the classic values
    edit(at, {1: {"dim 1": "0.5"}})  # the next edit does not bring the old one back
    assert x_table(at).iloc[0, 0] == pytest.approx(1.16) and x_table(at).iloc[1, 1] == 0.5


@pytest.mark.parametrize(
    ("params", "escaped"),
    [
        ({"T": "x\n\n# BIG"}, "\\# BIG"),
        ({"src": "x\n\n![i](http://a.io/i.png)"}, "\\!\\[i\\]\\(http\u2060\\:"),
        ({"T": "$x^2$ **b** [a](http://a.io)"}, "\\$x\\^2\\$ \\*\\*b\\*\\*"),
    ],
)
def test_url_newline_markdown(params, escaped):
    """A blank line in a link value cannot end the message and start markdown of its own."""
    at = open_page("pages/step_by_step.py", **params)
    no_exception(at)
    no_html(at)
    (message,) = [w.value for w in at.sidebar.warning]
    assert "\n" not in message and escaped in message


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("pages/step_by_step.py", {"T": "see http://a.io/x, www.b.io and c@d.io"}),
        ("pages/bug_hunt.py", {"bug": "https://a.io/x"}),
    ],
)
def test_url_autolink(page, params):
    """An address in a link value is shown as typed, not made a link: markdown finds bare
    addresses in the text after reading the escapes, so the escapes alone do not stop it."""
    at = open_page(page, **params)
    no_exception(at)
    (message,) = [w.value for w in at.warning]
    text = re.sub(r"\\(.)", r"\1", message)  # the text the markdown renderer searches
    assert not re.search(r"(?i)https?://|www\.|[-.+\w]+@[-\w]+\.\w", text), text
    assert next(iter(params.values())) in as_read(message)


def test_url_bidi():
    """A right-to-left override cannot reverse the rest of the message: it is written out."""
    at = open_page("pages/step_by_step.py", T="1\u202egnp.exe")
    (message,) = sidebar_warnings(at)
    assert "\u202e" not in message and "⟨U+202E⟩" in message


def test_text_zero_width():
    """Zero-width and combining characters cannot make an invisible token label."""
    at = open_page("pages/step_by_step.py", src="sentence", text="a \u200b b \u0301 c", T="8")
    no_exception(at)
    labels = list(table(at.dataframe[0]).index)
    assert "⟨U+200B⟩" in labels and all(label.strip() for label in labels)
    assert not any(label.startswith("\u0301") for label in labels)


def test_masking_markup():
    """The masking lesson names the last token in its prose: as typed, never bold."""
    at = open_page("pages/masking.py", src="sentence", text="the cat __word__", T="3")
    no_exception(at)
    prose = next(m.value for m in at.markdown if "is blocked as well" in m.value)
    assert "\\_\\_word\\_\\_" in prose


@pytest.mark.parametrize("typed", ["**x**", "$x^2$", "[a](http://a.io)"])
def test_answer_markup(typed):
    """Check-yourself feedback echoes what was typed as text."""
    at = open_page("pages/worked_example.py")
    by_hand(at, 1).set_value(typed).run()
    no_exception(at)
    (message,) = [w.value for w in at.warning if "is not a number" in as_read(w.value)]
    assert typed not in message and typed in as_read(message)


def lesson_warnings(at) -> list[str]:
    return [as_read(w.value) for w in at.main.warning]


@pytest.mark.parametrize(
    "page, params, words",
    [
        (
            "pages/masking.py",
            {"pad": "9"},
            "The link's pad=9 is not a whole number from 0 to 5: using 0.",
        ),
        (
            "pages/kv_cache.py",
            {"decode_step": "60"},
            "decode_step=60 is not a whole number from 0 to 5: using 0.",
        ),
        (
            "pages/at_scale.py",
            {"block_q": "0"},
            "block_q=0 is not a whole number from 1 to 6: using 2.",
        ),
        (
            "pages/what_heads_learn.py",
            {"learn_seed": "abc"},
            "learn_seed=abc is not a whole number from 0 to 99999: using 1.",
        ),
    ],
)
def test_lesson_url_range(page, params, words):
    at = open_page(page, **params)
    no_exception(at)
    assert any(words in w for w in lesson_warnings(at)), lesson_warnings(at)


@pytest.mark.parametrize(
    "page, params, words",
    [
        (
            "pages/step_by_step.py",
            {"head": "7"},
            "The link's head=7 is not a head of this layer (0 to 1): using 0.",
        ),
        (
            "pages/why_sqrt_dk.py",
            {"dk": "3"},
            "dk=3 is not one of 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024: using 512.",
        ),
        (
            "pages/bug_hunt.py",
            {"bug_task": "chess"},
            "bug_task=chess is not one of induction, previous_token: using induction.",
        ),
        (
            "pages/kv_cache.py",
            {"kv_heads": "3"},
            "kv_heads=3 is not a divisor of H = 2 (1, 2): using 1.",
        ),
    ],
)
def test_lesson_url_option(page, params, words):
    at = open_page(page, **params)
    no_exception(at)
    assert any(words in w for w in lesson_warnings(at)), lesson_warnings(at)


def test_lesson_url_heads():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["learn_off"] = ["layer 9 · head 9", "layer 0 · head 0 (previous-token head)"]
    at.switch_page("pages/what_heads_learn.py").run()
    no_exception(at)
    assert at.pills(key="learn_off").value == [(0, 0)]
    assert any(
        "learn_off=layer 9 · head 9, layer 0 · head 0" in w
        and "is not heads of this model: using layer 0 · head 0 (previous-token head)." in w
        for w in lesson_warnings(at)
    ), lesson_warnings(at)


def test_lesson_url_markup():
    at = open_page("pages/masking.py", pad="**9**")
    no_exception(at)
    no_html(at)
    (warning,) = [w.value for w in at.main.warning]
    assert "\\*\\*9\\*\\*" in warning  # escaped: shown as typed, not bold
    at = open_page("pages/at_scale.py", tile_step="1\u202e2")
    assert any("⟨U+202E⟩" in w for w in lesson_warnings(at)), lesson_warnings(at)


@pytest.mark.parametrize(
    "word, reason",
    [
        ("a", "type 2 letters or more"),
        ("xyz", "knows only the letters a to l"),
        ("abca", "each letter may appear once"),
        ("**ab**", "knows only the letters a to l"),
    ],
)
def test_cross_word(word, reason):
    at = open_page("pages/cross_attention.py", cross_word=word)
    no_exception(at)
    said = [as_read(e.value) for e in at.error]
    assert any(reason in s and f"'{word}' cannot be read" in s for s in said), said
    assert any("Showing the default word" in c.value for c in at.caption)
    no_html(at)
    if "*" in word:  # escaped: drawn as the two stars typed, not as bold
        assert any("\\*\\*ab" in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"blk_text": ""}, "The model has nothing to read"),
        ({"blk_text": "€€€"}, "The model has nothing to read"),
        ({"blk_text": "ab", "blk_pos": "7"},
         "The link's blk_pos=7 is not a position of the text, 0 to 1: using 1."),
        ({"blk_char": "é"}, "blk_char=é is not one of the model's 65 characters"),
    ],
)  # fmt: skip
def test_block_text(params, words):
    at = open_page("pages/block.py", **params)
    no_exception(at)
    said = [as_read(w.value) for w in at.warning]
    assert any(words in s for s in said), said
    if "blk_text" in params and len(params) == 1:
        assert any("Showing the default text" in c.value for c in at.caption)
    assert not at.error
    no_html(at)
