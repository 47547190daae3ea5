"""Every sentence lesson 12 writes about numbers, a head or the model, with what makes it true.

Issue 41: each audit of a lesson found sentences that its numbers did not support. Here checking
a sentence is part of writing it: CLAIMS lists each kind of sentence the page writes (a pattern
of its words) beside the test that computes or asserts it, or "definition" for a sentence that
states what a word means and no fact about this model. The page is read at its default and at
two other settings (random letters, a line of Hamlet's with other controls), and a sentence of
the factual kind (a number, or words about copying, predicting, a head or the model) that no
entry holds fails: a new sentence needs its check before it lands.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import as_read, no_exception, open_page

PAGE = "pages/real_model.py"
TESTS = Path(__file__).resolve().parent
REAL = "dashboard/test_real_model.py"
LM = "attention/test_lm.py"

CLAIMS: dict[str, str] = {
    # the model card: the build's figures and the sizes, counted from the model
    r"^A GPT of \*\*\d+ layers × \d+ heads\*\*, d_model = \d+, context \d+ characters, [\d,]+ "
    r"parameters; .*It trained on the first 90 % of tiny Shakespeare \([\d,]+ of its [\d,]+ "
    r"characters": f"{REAL}::test_model_card_counts_what_it_trained_on_and_its_parameters",
    r"^Measured when the model was built": (
        f"{LM}::test_the_figures_stored_with_the_model_are_its_own"
    ),
    r"^Embeddings of the 65 characters and \d+ positions: [\d,]+\. W_q, W_k, W_v and W_o": (
        f"{REAL}::test_model_card_counts_what_it_trained_on_and_its_parameters"
    ),
    # every head, one head
    r"^Each map is one head reading your text": "definition",
    r"^(previous-token|two-back|induction|first-token|same-character|space-and-punctuation|"
    r"current-token) (head|sink) \(\d+% of its best\)$|^no clear role \(best: .+, \d+% of its "
    r"best\)$": f"{REAL}::test_lesson_12_shows_every_head_named_from_its_scores",
    r"^Each cell: TransformerLens's \[head-detector score\]": (
        f"{LM}::test_the_shipped_model_has_a_previous_token_and_an_induction_head"
    ),
    r"^The last query, .+ \(position \d+\), gives key \d+ \(.+\) its largest weight, "
    r"\*\*[\d.]+\*\*\. The head's role on this text: \*\*": (
        f"{REAL}::test_lesson_12_shows_every_head_named_from_its_scores"
    ),
    # what comes next
    r"^The model's last step turns each position's vector into 65 \[logits\]": "definition",
    r"^The sampler's likeliest next character: \*\*.+\*\*, at [\d.]+%.* Temperature [\d.]+ "
    r"divides the logits .* "
    r"top-k \d+ keeps the \d+ likeliest .*\d+ characters? can be drawn\.$": (
        f"{REAL}::test_lesson_12_top_p_says_how_many_characters_can_be_drawn"
    ),
    r"^\*\*120 characters it writes next\*\* \(seed \d+\):$": "definition",
    r"^Press Write to sample 120 characters": "definition",
    r"^At a higher temperature and top-k it may start a run of random letters: \d+% of the "
    r"windows it trained on had one, written twice\.$": (
        f"{LM}::test_the_recipe_writes_random_strings_twice_in_its_share_of_windows"
    ),
    r"^Writing \d+ characters after “ROMEO:” \(one fixed run, whatever your text\) took": (
        f"{LM}::test_sampling_with_the_cache_writes_the_same_text"
    ),
    r"^Best of three runs each, one torch thread\. Without the cache every character re-runs "
    r".*keep its last \d+ characters": (
        f"{LM}::test_sampling_past_the_context_keeps_the_windows_last_half"
    ),
    # knock out heads
    r"^Zero a head's output before W_o mixes the heads": "definition",
    r"^Without (L\dH\d(, )?)+ the model is (worse|no worse) at your text: [\d.]+ → [\d.]+ nats": (
        f"{REAL}::test_lesson_12_next_character_and_knock_out"
    ),
    # type it twice
    r"^An \*\*induction head\*\* finds where the current character appeared before": "definition",
    r"^The texts: a made-up name, .*Each is cut to its first 32 characters": (
        f"{REAL}::test_lesson_12_text_twice_on_the_page"
    ),
    r"^For your text, the first copy costs [\d.]+ nats a character \((above|between|below) .*"
    r"\), the second [\d.]+ \(.*\): the second (is \*\*[\d.]+ nats cheaper\*\*|costs)": (
        f"{REAL}::test_copy_verdict_says_what_the_two_costs_show"
    ),
    r"^The made-up name and the random letters cost [\d.]+ and [\d.]+ nats a character the first "
    r"time.*On these texts the model copies the strings of letters, the kind it was trained to "
    r"copy, and not the lines of Shakespeare\.$": (
        f"{REAL}::test_copying_summary_holds_on_the_fixed_texts_and_only_when_they_show_it"
    ),
    r"^\*\*layer \d · head \d on .+ written twice\*\* \(\d+ characters\)\. From each "
    r"character that occurred earlier .*puts \*\*[\d.]+\*\* of its weight there, on average": (
        f"{REAL}::test_induction_caption_is_the_heads_weight_on_the_target"
    ),
    # take it home, the frame's own sentences
    r"^Write layer \d of this model yourself": "definition",
    r"^\*\*What you learned\*\*: a trained model's heads take on roles you can measure": (
        f"{REAL}::test_lesson_12_shows_every_head_named_from_its_scores"
    ),
    r"^\*\*What you will learn\*\*": "definition",
    r"^A number counts as right within 0\.005": (
        "attention/test_drills.py::test_rule_says_what_the_grader_does"
    ),
    r"^This lesson uses none of these controls": "definition",
    r"^A matrix this large is drawn as one picture": "definition",
    r"^On a narrow screen, a table wider than the page": "definition",
    r"^Here is a whole language model, \*\*built from this project's own attention "
    r"layer\*\*": f"{LM}::test_the_forward_matches_pytorchs_attention",
}

FACTUAL = re.compile(
    r"\d|\b(cop(y|ies|ying)|predicts?|cheaper|costs?|heads?|model|weights?|loss)\b", re.I
)
SETTINGS = [
    {},
    {"rm_text": "qXzPwLmKjRtYvBnCqXzP", "rm_topp": "0.5", "rm_off": "layer 1 · head 1"},
    {"rm_text": "HAMLET:\nTo be, or not to be, that is the question:", "rm_layer": "1",
     "rm_head": "2", "rm_temp": "1.5", "rm_topk": "20", "rm_off": "layer 0 · head 0"},
]  # fmt: skip


def sentences(at) -> list[str]:
    """Every text element the page shows, as a student reads it (a question's own prompt is
    the drills' business: each lesson's question makers and tests/attention/test_questions.py)."""
    shown = (*at.markdown, *at.caption, *at.info, *at.warning)
    return [as_read(m.value).strip() for m in shown if m.value.strip()]


@pytest.mark.parametrize("params", SETTINGS, ids=["default", "random-letters", "hamlet"])
def test_claims_every_factual_sentence_on_lesson_12_has_its_check(params):
    at = open_page(PAGE, **params)
    no_exception(at)
    unheld = []
    for text in sentences(at):
        if re.fullmatch(r"\*\*Question \d+\*\*", text) or not FACTUAL.search(text):
            continue
        if not any(re.search(pattern, text, re.S) for pattern in CLAIMS):
            unheld.append(text[:160])
    assert not unheld, "sentences with no check in tests/test_claims.py: " + " | ".join(unheld)


@pytest.mark.parametrize("check", sorted(set(CLAIMS.values()) - {"definition"}))
def test_claims_each_check_is_a_test_that_exists(check):
    path, _, name = check.partition("::")
    source = (TESTS / path).read_text()
    assert not name or re.search(rf"^def {re.escape(name)}\(", source, re.M), check
