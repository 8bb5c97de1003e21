"""The package as a Python user meets it: names, stubs, docstrings, exceptions."""

import ast
import importlib.metadata
import pickle
import re
from pathlib import Path

import pytest

import dyng
from conftest import ROOT

STUBS = Path(dyng.__file__).parent / "_dyng.pyi"


def stub_names():
    tree = ast.parse(STUBS.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
    return top, members


def test_the_stubs_list_what_the_module_has():
    top, members = stub_names()
    module = {n for n in dir(dyng._dyng) if not n.startswith("_") or n == "__version__"}
    assert module == top
    for cls, names in members.items():
        have = {n for n in dir(getattr(dyng._dyng, cls)) if not n.startswith("_")}
        assert have == names - {"__init__", "__len__"}, cls


def test_every_public_name_has_a_docstring():
    for name in dyng.__all__:
        obj = getattr(dyng, name)
        if callable(obj):
            assert obj.__doc__ and len(obj.__doc__) > 20, name
    for cls in (dyng.Graph, dyng.SsspResult, dyng.MospResult, dyng.Batch, dyng.Resources):
        for name in dir(cls):
            if not name.startswith("_"):
                assert getattr(cls, name).__doc__, f"{cls.__name__}.{name}"
    assert "Applies `batch` to `graph` once" in dyng.update.__doc__
    assert dyng.update.__text_signature__ == "(resources, graph, batch, results=None)"


@pytest.mark.parametrize("name", [n for n in dyng._errors.__all__])
def test_exceptions_survive_pickling(name):
    """Dask sends errors back pickled (with tblib's reducers)."""
    cls = getattr(dyng, name)
    try:
        raise cls("dyng: a message")
    except dyng.DyngError as e:
        err = e
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls and str(back) == "dyng: a message"
    tblib = pytest.importorskip("tblib.pickling_support")
    tblib.install()
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls and str(back) == "dyng: a message"


def test_reprs(seq):
    g = dyng.Graph.from_edges([0, 1], [1, 2], [[1, 2], [3, 4]])
    assert repr(g) == "<dyng.Graph n=3 m=2 k=2 version=0>"
    assert repr(seq) == 'dyng.Resources(backend="sequential", threads=1)'
    t = dyng.SsspResult.compute(seq, g, 0)
    assert repr(t) == "<dyng.SsspResult source=0 objective=0 n=3 graph_version=0>"
    assert "invalidated=" in repr(t.stats) and t.stats.as_dict()["affected"] >= 0
    assert repr(dyng.Batch(deletions=([0], [1]))) == "<dyng.Batch insertions=0 deletions=1 k=any>"
    assert dyng.version() == dyng.__version__ == "0.1.0"


def test_every_error_kind_has_its_class():
    body = (ROOT / "src" / "error.rs").read_text().split("pub enum ErrorKind {", 1)[1].split("}", 1)[0]
    kinds = re.findall(r"^\s*([A-Z]\w*),", body, re.M)
    assert len(kinds) >= 12, kinds
    for kind in kinds:
        cls = getattr(dyng, kind)
        assert issubclass(cls, dyng.DyngError) and cls.kind == kind and kind in dyng.__all__


def test_one_abi3_wheel_for_cpython_3_9_on():
    dist = importlib.metadata.distribution("dyng")
    tags = [l.split(":", 1)[1].strip() for l in dist.read_text("WHEEL").splitlines() if l.startswith("Tag:")]
    assert len(tags) == 1 and re.fullmatch(r"cp39-abi3-linux_\w+", tags[0]), tags
    assert Path(dyng._dyng.__file__).name == "_dyng.abi3.so"
    assert dist.metadata["Requires-Python"] == ">=3.9"
