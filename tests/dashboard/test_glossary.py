"""Issue 30, item 9: terms before use. Lesson 1 used "saturate" (taught in lesson 4),
sinusoidal positions (9), H_kv (10), concat and W_o (2) with no word of explanation. Every term
a lesson uses before the lesson that teaches it is linked to its glossary entry where it first
appears on the page; the glossary page defines each and links the lesson that teaches it."""

import pytest
from conftest import elements, no_exception, open_page

from dashboard import glossary, state
from dashboard.frame import LESSONS

PROSE = ("markdown", "caption", "text", "header", "subheader", "title", "alert")


def page_text(at) -> str:
    return "\n".join(
        str(getattr(element, "value", "")) for element in elements(at.main) if element.type in PROSE
    )


@pytest.mark.parametrize("params", [{}, {"src": "sentence", "pos": "true"}])
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.path)
def test_glossary_every_term_used_before_its_lesson_is_linked_at_first_use(lesson, params):
    at = open_page(lesson.path, **params)
    no_exception(at)
    assert glossary.unlinked_uses(page_text(at), lesson.number) == []


def test_glossary_page_defines_every_term_and_names_its_lesson():
    at = open_page("pages/glossary.py")
    no_exception(at)
    anchors = {h.proto.anchor for h in at.subheader}
    assert anchors == {term.anchor for term in glossary.TERMS}
    numbers = {lesson.number: lesson for lesson in LESSONS}
    links = [link.label for link in at.get("page_link")]
    for term in glossary.TERMS:
        assert f"Taught in {numbers[term.lesson].title}" in links


def test_a_term_names_its_lesson_by_page_so_its_number_follows_the_course():
    """Issue 43: a term held its lesson as a bare number; it names the lesson's page, and its
    number is the lesson's place in the course now."""
    pages = {lesson.url_path: lesson for lesson in LESSONS}
    for term in glossary.TERMS:
        assert term.taught_in in pages, term.name
        assert term.lesson == pages[term.taught_in].number


def test_glossary_linked_links_the_first_plain_use_only():
    text = "A `concat` in code, then concat and concat, and [W_o](/elsewhere) then W_o."
    done = glossary.linked(text, 1)
    assert done == (
        "A `concat` in code, then [concat](/glossary#concat) and concat, and [W_o](/elsewhere) "
        "then [W_o](/glossary#w-o)."
    )
    assert glossary.unlinked_uses(done, 1) == []
    assert glossary.unlinked_uses(text, 1) == ["concat", "W_o"]
    assert glossary.linked(text, 2) == text  # lesson 2 teaches both


def test_glossary_linked_stays_within_the_cache_budget_over_a_long_class(monkeypatch):
    """Issue 54, item 5: `linked` was kept for the server's life ("a few hundred texts"), keyed
    on texts that carry the settings, a seed among them (0 to 99,999): it grew as long as the
    server ran. Its entries now live in the shared byte budget: texts over 5,000 seeds (about
    2 MB of them, keys and values) leave the pool within its budget, nothing kept for the
    server's life, the latest texts held and the oldest gone."""
    pool = state.Pool(budget=64 * 1024)
    monkeypatch.setattr(state, "POOL", pool)
    texts = [
        f"Seed {seed}: the concat of the heads goes through W_o, and a large score saturates."
        for seed in range(5_000)
    ]
    for text in texts:
        assert "(/glossary#concat)" in glossary.linked(text, 1)
        assert pool.total <= pool.budget
    held = [key for key in pool.entries if key[0] == "dashboard.glossary.linked"]
    assert not pool.kept and 0 < len(held) < len(texts) // 10
    assert ("dashboard.glossary.linked", (texts[-1], 1), ()) in pool.entries
    assert ("dashboard.glossary.linked", (texts[0], 1), ()) not in pool.entries
