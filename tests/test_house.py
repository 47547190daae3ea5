"""The house's rules, checked: the maths imports no display library, the display's frame no
torch, and no module has an import-time side effect on torch."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DISPLAY = ("streamlit", "altair", "pandas")


def modules_of(package: str) -> list[str]:
    path = ROOT / package
    return [package] + [
        f"{package}.{info.name}"
        for info in pkgutil.walk_packages([str(path)])
        if not info.name.startswith("_")
    ]


def imported_after(statement: str) -> set[str]:
    """The top-level packages a fresh interpreter has imported after `statement`."""
    listed = "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    code = f"{statement}\nimport sys\n{listed}"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


@pytest.mark.parametrize("module", modules_of("attention"))
def test_attention_module_imports_no_display_library(module):
    assert not imported_after(f"import {module}") & set(DISPLAY)


@pytest.mark.parametrize(
    "module", ["dashboard.frame", "dashboard.server", "dashboard.controls", "dashboard.text"]
)
def test_dashboard_frame_imports_no_torch(module):
    """The home page draws before torch has loaded (server.warm_up imports it in the background)."""
    assert "torch" not in imported_after(f"import {module}")


def test_importing_the_dashboard_leaves_torch_threads_alone():
    code = "\n".join(
        [
            "import torch",
            "n = torch.get_num_threads()",
            "import dashboard.lessons",
            "print(n == torch.get_num_threads())",
        ]
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def test_every_ui_module_lives_in_dashboard():
    """Only dashboard/, pages/, the entry file, tests and benchmarks import a display library."""
    offenders = []
    for path in (ROOT / "attention").rglob("*.py"):
        text = path.read_text()
        for library in DISPLAY:
            if f"import {library}" in text or f"from {library}" in text:
                offenders.append(f"{path.relative_to(ROOT)}: {library}")
    assert not offenders


def test_the_dashboard_has_one_cache_mechanism():
    """Every result kept between reruns goes through dashboard/state.py's pool and its budget:
    no st.cache_resource, st.cache_data or functools cache beside it."""
    others = ("st.cache_resource", "st.cache_data", "lru_cache", "functools.cache")
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for folder in ("dashboard", "pages")
        for path in (ROOT / folder).rglob("*.py")
        for name in others
        if f"@{name}" in path.read_text() or f"{name}(" in path.read_text()
    ]
    assert not offenders


# What the display may ask of torch: types, moving data in (a tensor of chart shades), running
# the maths in a mode, and the server's thread count.
DISPLAY_TORCH = {
    "Tensor", "Generator", "nn", "tensor", "from_numpy", "float64", "inference_mode", "no_grad",
    "get_num_threads", "set_num_threads",
}  # fmt: skip


def test_the_dashboard_calls_no_torch_maths():
    """dashboard/ and pages/ move tensors into tables and charts; every number they show is
    computed in attention/ (the notebook cells are plain PyTorch on purpose: they rebuild it)."""
    offenders = []
    for folder in ("dashboard", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            if "cells" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in ("torch", "F")
                    and node.attr not in DISPLAY_TORCH
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: torch.{node.attr}")
    assert not offenders


# What a view may ask of a tensor itself: read it out (tolist, item, numpy), copy or place it
# (detach, clone, cpu, to, contiguous), rearrange it without arithmetic (reshape, view, flatten,
# ravel, squeeze, unsqueeze, transpose, permute, t, movedim, swapaxes, flip, narrow, select,
# index_select, chunk, unbind) and ask its size (numel; .shape is no call).
MOVING_DATA = {
    "tolist", "item", "numpy", "detach", "detach_", "clone", "cpu", "to", "contiguous",
    "reshape", "view", "flatten", "ravel", "squeeze", "unsqueeze", "transpose", "permute", "t",
    "movedim", "moveaxis", "swapaxes", "swapdims", "flip", "fliplr", "flipud", "narrow",
    "select", "index_select", "chunk", "unbind", "numel",
}  # fmt: skip
VIEWS = ("dashboard/views", "pages", "dashboard/shakespeare.py")  # what draws a lesson


def tensor_maths_methods() -> set[str]:
    """The tensor methods that compute: every method torch also offers as a function
    `torch.<name>` (sum, mean, softmax, argmax, topk, matmul, masked_fill, ...), less MOVING_DATA
    and less the names Python's own str, list, dict, tuple, set and numbers use for their
    methods (split, sort, add, count: a view's `text.split()` is no tensor maths)."""
    import torch

    python = set().union(*(dir(kind) for kind in (str, bytes, list, dict, tuple, set, int, float)))
    methods = {
        name
        for name in dir(torch.Tensor)
        if not name.startswith("_") and callable(getattr(torch, name, None))
    }
    return methods - MOVING_DATA - python


def tensor_maths(source: str) -> list[tuple[int, str]]:
    """(line, what) for each piece of tensor maths in a module's source: a matrix product `a @ b`,
    or a call `x.name(...)` of a method in tensor_maths_methods(). Python cannot tell a tensor
    from anything else without running the code, so the rule reads the call's receiver: a name
    the module imports is a module (`math.ceil`, `charts.histogram`: functions of ours or of the
    standard library; `torch.X` has its own test above) and a value straight out of numpy's
    module (`np.abs(v).max()`) is an array a chart's bins are laid out with; anything else may
    be a tensor, and computing on it belongs in attention/. Arithmetic operators are not read
    (ints and floats use them too): a number a page shows from a tensor takes a reduction
    (.sum(), .mean(), .argmax(), ...) or an index, and the reductions are caught."""
    tree = ast.parse(source)
    modules = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    } - {"torch", "F"}
    maths = tensor_maths_methods()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.append((node.lineno, "@"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in maths
        ):
            receiver = node.func.value
            if isinstance(receiver, ast.Name) and receiver.id in modules:
                continue  # a module's function
            if (
                isinstance(receiver, ast.Call)
                and isinstance(receiver.func, ast.Attribute)
                and isinstance(receiver.func.value, ast.Name)
                and receiver.func.value.id in ("np", "numpy")
            ):
                continue  # an array numpy's module just made
            found.append((node.lineno, f".{node.func.attr}()"))
    return sorted(found)


def test_tensor_maths_catches_methods_and_the_matrix_product_not_moving_data():
    computing = (
        "import torch\n"
        "p = weights.softmax(-1)\n"
        "kept = int((p > 0).sum())\n"
        "cost = float(losses(model, ids).mean())\n"
        "key = int(weights[last].argmax())\n"
        "out = weights @ v\n"
    )
    assert [what for _, what in tensor_maths(computing)] == [
        ".softmax()", ".sum()", ".mean()", ".argmax()", "@"
    ]  # fmt: skip
    moving = (
        "import math\n"
        "import numpy as np\n"
        "from dashboard.render import charts\n"
        "rows = weights[0].tolist()\n"
        "T = weights.shape[-1]\n"
        "value = float(weights[1, 2].item())\n"
        "frame = weights.detach().numpy().reshape(T, -1)\n"
        "words = text.split()\n"
        "ticks = math.ceil(T / 4)\n"
        "chart = charts.histogram(frame, x='q')\n"
        "edge = float(np.abs(values).max())\n"
    )
    assert tensor_maths(moving) == []


def test_a_view_does_no_tensor_maths():
    """A lesson's blocks (dashboard/views/, pages/, the Shakespeare blocks three lessons share)
    move tensors into tables and charts; the sums, means, argmaxes, softmaxes and products
    behind the numbers they show are computed in attention/ (issue 54, item 3: lesson 12's
    losses and lesson 6's count of right answers were computed in their views). The rule is
    tensor_maths's."""
    offenders = []
    for entry in VIEWS:
        target = ROOT / entry
        for path in sorted(target.rglob("*.py")) if target.is_dir() else [target]:
            for line, what in tensor_maths(path.read_text()):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not offenders


def imports_of(path: Path, package: str) -> set[str]:
    """The modules of `package` one file imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            found.update(submodules)
            folder = ROOT.joinpath(*node.module.split("."))
            if not all((folder / f"{alias.name}.py").exists() for alias in node.names):
                found.add(node.module)  # a name the module defines, not only its submodules
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == package}


def module_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (at its top or inside a function).
    `from attention import diagnosis` is the module attention.diagnosis; a name the package's
    __init__ only re-exports (`from attention import STAGES`) counts as no edge: the __init__ is
    the package's front door, not a floor of its own."""
    files = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for path in (ROOT / package).rglob("*.py")
    }
    graph = {}
    for name, path in files.items():
        found = imports_of(path, package) & set(files)
        graph[name] = {m for m in found if m != package or name == package}
    return graph


@pytest.mark.parametrize("package", ["dashboard", "attention"])
def test_no_import_circle(package):
    """Issue 25: `dashboard.lessons` and `dashboard.trained` imported each other (one of them
    inside a function); issue 43: `attention.drills` and `attention.diagnosis` (hidden behind a
    `getattr` by string). No module reaches itself through its imports."""
    graph = module_graph(package)
    for start in graph:
        seen, todo = set(), [m for m in graph[start] if m != start]
        while todo:
            module = todo.pop()
            assert module != start, f"{start} imports itself through {sorted(seen)}"
            if module not in seen:
                seen.add(module)
                todo.extend(graph.get(module, ()))


def test_no_module_imports_another_by_a_string():
    """A circle hidden as `getattr(module, "name")` or import_module("attention....") is still a
    circle: the maths names what it calls."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "attention").rglob("*.py")
        if "getattr(diagnosis" in path.read_text() or 'import_module("attention' in path.read_text()
    ]
    assert not offenders


def test_a_class_arriving_at_once_imports_every_page_without_a_deadlock():
    """A class's first load deadlocked: one script thread inside `attention.bugs`'s __init__
    importing its catalogue, another inside the catalogue importing the package. The entry file
    imports each page's modules holding one lock (`server.import_page`); here every lesson's
    first import starts at once in a fresh interpreter, and every one must finish."""
    code = (
        "import threading, sys\n"
        "from dashboard import frame, server\n"
        "errors = []\n"
        "def go(path):\n"
        "    try:\n"
        "        server.import_page(path)\n"
        "    except Exception as error:\n"
        "        errors.append(repr(error))\n"
        "threads = [threading.Thread(target=go, args=(p.path,)) for p in frame.LESSONS * 2]\n"
        "[t.start() for t in threads]\n"
        "[t.join(120) for t in threads]\n"
        "print(errors, sum(t.is_alive() for t in threads), 'attention.bugs' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == "[] 0 True", out.stdout


def test_every_file_the_package_ships_is_tracked():
    """The corpus, the language model and the tiny checkpoints are read at run time: none may
    be left out of the repository by .gitignore (its `data/` once caught the corpus)."""
    from attention.cross.held_out import PATH as HELD_OUT
    from attention.cross.training import CHECKPOINT as REVERSE
    from attention.lm.corpus import CORPUS
    from attention.lm.training import CHECKPOINT
    from attention.tiny.training import CHECKPOINTS

    shipped = [CORPUS, CHECKPOINT, REVERSE, HELD_OUT, *sorted(CHECKPOINTS.glob("*.pt.xz"))]
    assert len(shipped) >= 8
    for path in shipped:
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", str(path)], cwd=ROOT, capture_output=True
        )
        assert ignored.returncode == 1, f"{path.relative_to(ROOT)} is ignored by .gitignore"


def test_a_lesson_module_imports_no_other_lesson_and_nothing_below_imports_one():
    """Issue 43: lessons did not stay in their own place (lesson 12's view borrowed lesson 6's
    weights map; lesson_frame, under every lesson, borrowed lesson 8's drill blocks). What two
    lessons share lives below both (render/): no views module imports another, and render/ and
    lesson_frame.py import none."""
    graph = module_graph("dashboard")
    lessons = {name for name in graph if name.startswith("dashboard.views.")}
    crossing = {
        name: sorted(graph[name] & lessons)
        for name in graph
        if (name in lessons or name.startswith("dashboard.render") or name.endswith("lesson_frame"))
        and graph[name] & (lessons - {name})
    }
    assert not crossing, crossing


def test_no_arrow_runs_back_up():
    """Issue 43's three upward arrows: the maths of the dashboard (lessons.py) borrowed from
    render/, the frame imported the lessons' package for its path, class mode imported lesson
    7's view for its mystery question (now the bug hunt's declared class extra)."""
    graph = module_graph("dashboard")
    for module in (m for m in graph if m.startswith("dashboard.classroom")):
        assert not {m for m in graph[module] if m.startswith("dashboard.views")}, module
    assert not {m for m in graph["dashboard.lessons"] if m.startswith("dashboard.render")}
    assert not {m for m in graph["dashboard.frame"] if m.startswith("dashboard.views")}
    assert not {m for m in graph["dashboard.server"] if m.startswith("dashboard.views")}


def test_a_page_imports_only_its_own_lesson():
    """Issue 43: lessons 5, 6 and 10's pages drew parts of lessons 3 and 12 through those
    lessons' modules. A page imports its own views module and none other (what lessons share
    lives below them: render/, shakespeare.py)."""
    offenders = {}
    for page in sorted((ROOT / "pages").glob("*.py")):
        views = {m for m in imports_of(page, "dashboard") if m.startswith("dashboard.views.")}
        others = views - {f"dashboard.views.{page.stem}"}
        if others:
            offenders[page.name] = sorted(others)
    assert not offenders, offenders


def calls_to(tree: ast.AST, receiver: str | None, name: str) -> list[ast.Call]:
    """The calls `receiver.name(...)` in a tree, or `name(...)` where receiver is None."""

    def called(func: ast.expr) -> bool:
        if receiver is None:
            return isinstance(func, ast.Name) and func.id == name
        return (
            isinstance(func, ast.Attribute)
            and func.attr == name
            and isinstance(func.value, ast.Name)
            and func.value.id == receiver
        )

    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and called(node.func)]


def test_a_lesson_makes_its_questions_once_for_its_page_and_class_mode():
    """Issue 54, item 2: lessons built their check-yourself questions twice, on the page and
    again in class mode (pages/multi_head.py and views/multi_head.py's class_questions), free to
    drift apart. A lesson module's `lesson_questions` makes them: its page hands that call to
    lesson_frame.finish, and its class_questions calls it."""
    from dashboard.frame import LESSONS

    offenders = []
    for lesson in LESSONS:
        page = ROOT / lesson.path
        view = ROOT / "dashboard" / "views" / page.name
        page_tree, view_tree = ast.parse(page.read_text()), ast.parse(view.read_text())
        own = {  # the name the page gives its lesson module (`multi_head`, `view`)
            alias.asname or alias.name
            for node in ast.walk(page_tree)
            if isinstance(node, ast.ImportFrom) and node.module == "dashboard.views"
            for alias in node.names
        }
        finishing = calls_to(page_tree, "lesson_frame", "finish")
        handed = [  # a lambda: the questions are made only when Check yourself is open
            call.args[1]
            for call in finishing
            if len(call.args) == 2 and isinstance(call.args[1], ast.Lambda)
        ]
        if len(finishing) != 1 or not any(
            arg.body in calls_to(arg.body, name, "lesson_questions")
            for arg in handed
            for name in own
        ):
            offenders.append(
                f"{lesson.path}: not finish(__file__, lambda: view.lesson_questions(...))"
            )
        functions = {
            node.name: node for node in view_tree.body if isinstance(node, ast.FunctionDef)
        }
        if "lesson_questions" not in functions:
            offenders.append(f"{view.relative_to(ROOT)}: no lesson_questions")
        elif not calls_to(functions.get("class_questions", ast.Pass()), None, "lesson_questions"):
            offenders.append(f"{view.relative_to(ROOT)}: class_questions calls no lesson_questions")
    assert not offenders, offenders


def floors(package: str) -> dict[str, int]:
    """Each module's floor: 1 for one that imports no other module of the package, else one
    above the highest it imports. The notebook cells are left out: they are scripts the app
    reads as text (their imports run only when a cell file runs on its own)."""
    graph = {m: d for m, d in module_graph(package).items() if ".exports.cells" not in m}
    floor: dict[str, int] = {}

    def of(module: str) -> int:
        if module not in floor:
            floor[module] = 1 + max(
                (of(m) for m in graph[module] - {module} if m in graph), default=0
            )
        return floor[module]

    return {module: of(module) for module in graph}


def test_the_streamlit_side_is_a_short_stack():
    """Issue 43: the dashboard's longest import chain was 13 modules (class mode's teacher page
    through asking, lessons, controls and links down to text), a lesson module 10. Now at most 7
    (a page one floor above its lesson module); no app module imports a notebook cell."""
    floor = floors("dashboard")
    assert max(floor.values()) <= 7, sorted(floor.items(), key=lambda kv: -kv[1])[:5]
    graph = module_graph("dashboard")
    assert not any(
        ".exports.cells" in m for name, d in graph.items() if ".cells" not in name for m in d
    )


MAX_FUNCTION_LINES = 60


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[int, str, int]]:
    """(line, name, lines) of each function or method of `source` longer than `limit` lines,
    from its `def` to its last line, docstring and comments included."""
    return [
        (node.lineno, node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_long_functions_counts_from_def_to_last_line():
    """A function of 60 lines passes; one of 61, or a method of 61, is named with its length."""
    body = "".join(f"    x{i} = {i}\n" for i in range(59))
    assert long_functions(f"def short():\n{body}") == []
    longer = body + "    return 0\n"
    assert long_functions(f"def long():\n{longer}") == [(1, "long", 61)]
    method = "class A:\n    def m(self):\n" + longer.replace("    ", "        ")
    assert long_functions(method) == [(2, "m", 61)]


def test_no_function_is_longer_than_60_lines():
    """Issue 54, item 8: the sidebar was 100 lines, lesson 11's cost block 80, the concept
    check's report 83, lesson 11's question maker 80 and lesson 5's 72; each is now cut where a
    reader wants a name (one function per question). No function or method in attention/,
    dashboard/ or pages/ is longer than MAX_FUNCTION_LINES, with no exemptions."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {function}: {lines} lines"
        for folder in ("attention", "dashboard", "pages")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line, function, lines in long_functions(path.read_text())
    ]
    assert not offenders, offenders
