"""The examples of the README and the docs pages run as written and print what the pages show.

Every fenced ``python`` block of ``README.md`` and ``docs/**/*.md`` runs as its own ``__main__`` module,
in an empty directory, with this checkout first on the path: by default all of them in one interpreter
(the imports paid once; each block gets a fresh module namespace and its own directory, and its
stdout and stderr are captured apart), under ``-m slow`` each in a fresh interpreter too. When a plain fenced block follows it
directly, that block is what the page says it prints, and the test compares it with what the
example prints (timings such as ``0.03s``, or a table's seconds column, are not compared). Three kinds of block are run their own
way: a pytest file (first line ``# test_<name>.py``) runs under pytest and must pass as many tests
as its page shows; ``my_audits.py`` is found through a real ``dpverify.audits`` entry point; and a
block of ``$ dpverify ...`` commands runs each command and compares its output (a ``...`` line
stands for lines the page leaves out).

A comment on the line before a block changes how it is tested: ``<!-- docs-test: skip (why) -->``
(not run: it needs a Dask scheduler), ``<!-- docs-test: slow (why) -->`` (run with ``-m slow``),
``<!-- docs-test: output varies (why) -->`` (run, its output not compared).
(``tests/test_docs_site.py`` builds the site and checks the pages' links.)
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Pages whose python blocks are API sketches, not programs (they name values the reader has):
#: json.md shows ``contract.validate(document, "audit")``.
SKETCHES = {ROOT / "docs" / "json.md"}
PAGES = [page for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))] if page not in SKETCHES]
_MARK = re.compile(r"<!--\s*docs-test:\s*([a-z ,]+?)\s*(\(.*\))?\s*-->")
# a timing: 0.03s, in 3.05s, a table's seconds column; an audit's "in 0.2 s with 2 jobs (0.3 s of row time)"
_SECONDS = re.compile(r"\b\d+\.\d+ ?s\b|(?<=\s)\d+\.\d\d$|(?<=with )\d+ jobs?\b")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    marks: set[str] = field(default_factory=set)
    output: str | None = None  # the plain block right after it: what the page says it prints

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        fence = lines[index]
        if not fence.startswith("```"):
            index += 1
            continue
        marks: set[str] = set()
        mark = _MARK.fullmatch(lines[index - 1].strip()) if index else None
        if mark:
            marks = {word.strip() for word in mark.group(1).split(",")}
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        block = Block(page, index + 1, fence[3:].strip(), "\n".join(lines[index + 1 : end]) + "\n", marks)
        previous = blocks[-1] if blocks else None
        if (
            previous is not None and previous.language == "python" and previous.output is None
            and block.language == "" and previous.line + previous.text.count("\n") + 1 == index
        ):
            previous.output = block.text
        else:
            blocks.append(block)
        index = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in _blocks(page)]


def _is_test_file(block: Block) -> bool:
    return re.match(r"# (test_\w+\.py)\n", block.text) is not None


def _is_audit_module(block: Block) -> bool:
    return block.text.startswith('"""my_audits.py')


def _params(blocks: list[Block]) -> list:
    params = []
    for block in blocks:
        if "skip" in block.marks:
            continue
        marks = [pytest.mark.slow] if "slow" in block.marks else []
        params.append(pytest.param(block, id=block.name, marks=marks))
    return params


PROGRAMS = [b for b in BLOCKS if b.language == "python" and not _is_test_file(b) and not _is_audit_module(b)]
TEST_FILES = [b for b in BLOCKS if b.language == "python" and _is_test_file(b)]
COMMANDS = [b for b in BLOCKS if b.language == "" and b.text.startswith("$ dpverify ")]


def _run(args: list[str], cwd: Path, timeout: int = 300, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd), os.environ.get("PYTHONPATH", "")])}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          input=input)


def _normal(text: str) -> list[str]:
    return [_SECONDS.sub("<seconds>", line.rstrip()) for line in text.strip("\n").splitlines()]


def _matches(expected: str, printed: str) -> bool:
    """Whether ``printed`` reads as ``expected``, where a ``...`` line of ``expected`` stands for any lines."""
    pattern = ""
    for line in _normal(expected):
        pattern += r"(?:.*\n)*?" if line == "..." else re.escape(line) + r"\n"
    return re.fullmatch(pattern, "\n".join(_normal(printed)) + "\n") is not None


def test_the_pages_have_examples():
    """The parser finds what the pages hold (a refactor of it must not silently test nothing)."""
    assert len(PROGRAMS) >= 10 and all(block.output for block in PROGRAMS if "README" in block.name)
    assert len(TEST_FILES) >= 2 and len(COMMANDS) >= 2
    assert sum(_is_audit_module(block) for block in BLOCKS) == 1


def _check_program(block: Block, done) -> None:
    assert done.returncode == 0, f"{block.name}:\n{done.stderr}"
    if block.output is not None and "output varies" not in block.marks:
        assert _matches(block.output, done.stdout), f"{block.name} printed:\n{done.stdout}\nthe page shows:\n{block.output}"


#: Runs each block of the JSON list on stdin ([name, directory, text]) as a fresh ``__main__`` module in its
#: directory, stdout and stderr captured per block; prints {name: [returncode, stdout, stderr]} as JSON.
_ONE_INTERPRETER = """
import contextlib, io, json, os, sys, traceback, types
results = {}
for name, directory, text in json.load(sys.stdin):
    main = types.ModuleType("__main__")
    main.__file__ = os.path.join(directory, "example.py")
    saved = sys.modules["__main__"], list(sys.path), os.getcwd()
    sys.modules["__main__"] = main
    sys.path.insert(0, directory)
    os.chdir(directory)
    out, err, code = io.StringIO(), io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            exec(compile(text, main.__file__, "exec"), main.__dict__)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        code = 1
        err.write(traceback.format_exc())
    finally:
        sys.modules["__main__"], sys.path[:], _ = saved[0], saved[1], os.chdir(saved[2])
    results[name] = [code, out.getvalue(), err.getvalue()]
sys.__stdout__.write(json.dumps(results))
"""


@pytest.fixture(scope="module")
def program_runs(request, tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Every program block this session runs, run once in one interpreter (about 0.3 s of imports saved a
    block), each as its own ``__main__`` in its own empty directory."""
    import json

    selected = [item.callspec.params["block"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_example_prints_what_its_page_shows"]
    jobs = [[block.name, str(tmp_path_factory.mktemp("example")), block.text] for block in selected]
    done = _run(["-c", _ONE_INTERPRETER], tmp_path_factory.mktemp("driver"), timeout=900, input=json.dumps(jobs))
    assert done.returncode == 0, done.stderr
    return {name: subprocess.CompletedProcess([name], code, out, err) for name, (code, out, err) in json.loads(done.stdout).items()}


@pytest.mark.parametrize("block", _params(PROGRAMS))
def test_example_prints_what_its_page_shows(block: Block, program_runs):
    _check_program(block, program_runs[block.name])


@pytest.mark.slow  # each block in a fresh interpreter: no block leans on another's state (about 0.3 s more a block)
@pytest.mark.parametrize("block", _params(PROGRAMS))
def test_example_prints_what_its_page_shows_in_a_fresh_interpreter(block: Block, tmp_path: Path):
    (tmp_path / "example.py").write_text(block.text)
    _check_program(block, _run(["example.py"], tmp_path))


@pytest.mark.parametrize("block", _params(TEST_FILES))
def test_pytest_example_passes(block: Block, tmp_path: Path):
    name = re.match(r"# (test_\w+\.py)\n", block.text).group(1)  # type: ignore[union-attr]
    (tmp_path / name).write_text(block.text)
    done = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", name], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = re.search(r"^(\d+) passed", block.output or "", re.M)  # the page's `$ pytest -q` output
    assert passed is not None and f"{passed.group(1)} passed" in done.stdout, done.stdout


@pytest.mark.parametrize("block", _params(COMMANDS))
def test_commands_print_what_the_page_shows(block: Block, tmp_path: Path):
    # The commands' mechanisms: the page's first example, saved as the module it names.
    first = next(b for b in PROGRAMS if b.page == block.page)
    module = re.search(r"dpverify check (\w+):", block.text)
    if module:
        (tmp_path / f"{module.group(1)}.py").write_text(first.text.split("\nresult = ")[0])
    for name in re.findall(r"dpverify (?:audit|list) (\w+\.py)", block.text):  # an audit file the page shows
        (tmp_path / name).write_text(next(b.text for b in PROGRAMS if b.page == block.page
                                          and b.text.startswith(f'"""{name}')))
    for chunk in re.split(r"^(?=\$ )", block.text, flags=re.M):
        if not chunk.strip():
            continue
        command, _, expected = chunk.partition("\n")
        args = shlex.split(command[2:])
        done = _run(["-m", "dpverify", *args[1:]], tmp_path)
        printed = done.stdout + done.stderr
        assert _matches(expected, printed), f"{block.name}: {command}\nprinted:\n{printed}\nthe page shows:\n{expected}"


def test_add_your_own_audit_is_found_through_its_entry_point(tmp_path: Path):
    (block,) = [block for block in BLOCKS if _is_audit_module(block)]
    (tmp_path / "my_audits.py").write_text(block.text)
    # What `pip install` of a package declaring the entry point leaves on the path.
    info = tmp_path / "my_audits-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-audits\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[dpverify.audits]\nmy_audits = my_audits\n")
    done = _run(["-m", "dpverify", "audit", "--claim", "RR-ln3", "--quiet"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("RR-ln3")]
    assert len(rows) == 2, done.stdout
    assert "holds" in rows[0] and "1.099" in rows[0]  # eps* = ln 3 = 1.0986..., exactly at the claim
    assert "VIOLATED (expected)" in rows[1] and "1.946" in rows[1]  # ln(7/8 / (1/8)) = ln 7 = 1.9459...
    listing = _run(["-m", "dpverify", "list"], tmp_path)
    assert "rr_p_7_8" in listing.stdout and "a_agnostic" in listing.stdout  # ours and dpverify's own
