"""The course: what each lesson teaches (objectives, recap) and a plan for three 50-minute
lectures. Plain data, read by the lesson frame (dashboard/lesson_frame.py) and the home page;
tests/dashboard/test_course.py checks every page, section and link named here."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode


@dataclass(frozen=True)
class Frame:
    """The top and the bottom of one lesson page."""

    objectives: tuple[str, ...]  # two to four, each checked by a check-yourself question
    recap: str  # one line, shown beside the link to the next lesson


FRAMES = {
    "pages/step_by_step.py": Frame(
        (
            "compute a scaled score s′ = (q · k) × 1/√d_k by hand from a query and a key",
            "turn a row of scaled scores into one attention weight with the softmax",
            "compute one entry of a query's output as the weighted sum of V's column",
        ),
        "a query scores every key, the softmax turns its row into weights, the weights mix V.",
    ),
    "pages/multi_head.py": Frame(
        (
            "say the head size d_k = C / H for any head count that divides C",
            "say which head owns a given column of Q",
            "give q's shape after view(B, T, H, C // H).transpose(1, 2)",
        ),
        "H heads split C columns into H blocks of d_k = C / H, attend separately, then concat "
        "and W_o mix them.",
    ),
    "pages/masking.py": Frame(
        (
            "say which keys a causal mask with padding blocks for a query",
            "compute a weight under a mask: the softmax over the allowed keys only",
        ),
        "a mask removes keys before the softmax, so the allowed keys share all the weight.",
    ),
    "pages/why_sqrt_dk.py": Frame(
        (
            "give the spread of q · k for random q, k of size d_k (variance d_k, deviation √d_k)",
            "scale a score by 1/√d_k",
            "compute how far an unscaled softmax collapses onto one key",
        ),
        "dividing by √d_k keeps the scores' variance at 1, so the softmax stays soft and "
        "trainable.",
    ),
    "pages/worked_example.py": Frame(
        (
            "compute one attention weight by hand under a mask you choose",
            "compute one output entry from a row of scores and V",
        ),
        "every number of a small attention layer can be checked by hand, mask included.",
    ),
    "pages/what_heads_learn.py": Frame(
        (
            "predict which key an induction head attends to in a repeated sequence",
            "compute a head's previous-token score from its weights",
        ),
        "trained heads take on roles, previous-token and induction, that a score against a "
        "reference pattern measures and a knock-out confirms.",
    ),
    "pages/bug_hunt.py": Frame(
        (
            "compute what a weight becomes when the 1/√d_k is forgotten",
            "compute a weight through a broken mask, and say which step the bug changed",
        ),
        "each classic mistake is one wrong step; most raise nothing, so a check has to catch them.",
    ),
    "pages/drills.py": Frame(
        (
            "compute a scaled score, a weight and an output entry by hand",
            "give a tensor's shape after each reshape of multi-head attention",
            "say which keys a mask blocks",
        ),
        "every number of the layer can be computed by hand from the one before it.",
    ),
    "pages/position.py": Frame(
        (
            "say where a shuffled token's output goes when there is no mask",
            "compute a sinusoidal position entry PE[pos, i]",
            "rotate a pair of q by its RoPE angle",
        ),
        "attention moves outputs with their tokens; order comes from positions added to X or "
        "rotations of q and k.",
    ),
    "pages/kv_cache.py": Frame(
        (
            "compute the K and V cache's size after t tokens",
            "compute how much grouped-query attention shrinks it",
        ),
        "a cache keeps each token's keys and values once; grouped-query heads share them to "
        "shrink it.",
    ),
    "pages/at_scale.py": Frame(
        (
            "count the tiles FlashAttention computes for block sizes and a causal mask",
            "follow a row's running max m and normaliser ℓ through two key tiles",
        ),
        "FlashAttention gives the same output tile by tile, keeping only m, ℓ and an "
        "accumulator per row.",
    ),
}


@dataclass(frozen=True)
class Step:
    """One step of a lecture: a lesson opened by a link, the sections to show, a question."""

    page: str
    params: tuple[tuple[str, str], ...]  # the link's query parameters, in order
    minutes: int
    sections: tuple[str, ...]  # headers of the page, shown in this order
    ask: str  # what to put to the class


@dataclass(frozen=True)
class Lecture:
    title: str
    have_open: str
    steps: tuple[Step, ...]


COURSE = (
    Lecture(
        "Lecture 1 · The mechanism",
        "the projector on lesson 1, a second tab on lesson 2, pencil and paper for the class",
        (
            Step(
                "pages/step_by_step.py",
                (("T", "4"), ("heads", "1"), ("seed", "3")),
                20,
                ("One cell by hand", "Check yourself"),
                "Before the weights appear: which key will query 3 attend to most, and why?",
            ),
            Step(
                "pages/multi_head.py",
                (("T", "4"), ("d_model", "8"), ("heads", "2")),
                15,
                (
                    "Splitting C columns into H heads",
                    "Back together: concat, then W_o",
                    "Check yourself",
                ),
                "With C = 8 and H = 4, which columns does head 2 own?",
            ),
            Step(
                "pages/masking.py",
                (("src", "sentence"), ("text", "the cat sat on the mat"), ("T", "6")),
                15,
                ("One mask, three conventions", "The mask at work", "Check yourself"),
                "Which keys may 'sat' attend to under the causal mask?",
            ),
        ),
    ),
    Lecture(
        "Lecture 2 · Why it is built this way, and how it breaks",
        "lesson 4 on the projector; lessons 5 and 7 in tabs; the class on their own laptops "
        "for the drills",
        (
            Step(
                "pages/why_sqrt_dk.py",
                (("seed", "0"),),
                10,
                (
                    "Dot products grow with d_k",
                    "Large scores saturate the softmax",
                    "Check yourself",
                ),
                "If d_k quadruples, what happens to the spread of the scores?",
            ),
            Step(
                "pages/worked_example.py",
                (("causal", "true"),),
                15,
                ("The encodings: edit them", "Check yourself"),
                "Switch the mask off: which weights change, and which stay?",
            ),
            Step(
                "pages/bug_hunt.py",
                (("mode", "explore"), ("bug", "no_scaling")),
                15,
                ("Live checks", "Bugs that still train", "Check yourself"),
                "This layer trains: how would you find out it is wrong?",
            ),
            Step(
                "pages/drills.py",
                (("T", "4"), ("seed", "5")),
                10,
                ("Check yourself",),
                "Everyone: drills 2 and 3, then compare answers with a neighbour.",
            ),
        ),
    ),
    Lecture(
        "Lecture 3 · Beyond one layer",
        "lesson 6 on the projector (the induction task), lessons 9, 10 and 11 in tabs",
        (
            Step(
                "pages/what_heads_learn.py",
                (("learn", "induction"),),
                15,
                ("Head gallery", "Knock out heads", "Check yourself"),
                "Which head would you knock out to break copying? Predict, then try it.",
            ),
            Step(
                "pages/position.py",
                (("T", "6"), ("causal", "false")),
                10,
                ("Shuffle the tokens", "Sinusoidal positions, added to X", "Check yourself"),
                "Shuffle the tokens: which outputs change?",
            ),
            Step(
                "pages/kv_cache.py",
                (("T", "8"), ("d_model", "16"), ("heads", "4")),
                15,
                (
                    "Decode step by step",
                    "Grouped-query and multi-query attention: a smaller cache",
                    "Check yourself",
                ),
                "What does the cache hold after step 5, and what does step 6 compute?",
            ),
            Step(
                "pages/at_scale.py",
                (("T", "8"),),
                10,
                (
                    "The cost of T², measured on this server",
                    "FlashAttention: the same numbers, tile by tile",
                    "Check yourself",
                ),
                "Double T: how much more memory does plain attention need, and FlashAttention?",
            ),
        ),
    ),
)


def link(step: Step) -> str:
    """The step's address, as a student types it: /page?key=value&..."""
    name = step.page.removeprefix("pages/").removesuffix(".py")
    return f"/{name}?{urlencode(step.params)}" if step.params else f"/{name}"
