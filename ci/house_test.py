"""The house check against small trees made for each rule (python3 ci/house_test.py; ci/house.sh
runs it before the check).

Each case writes a workspace of its own into a temporary directory, runs the check there and
asserts its verdict and the line it prints, so that a change to the counting or to the graph is
seen to keep catching what it must catch and to leave alone what it must leave alone.
"""

import contextlib
import io
import os
import sys
import tempfile

import house


def tree(files):
    root = tempfile.mkdtemp(prefix="house-test-")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    return root


def check(files, argv=()):
    root = tree(files)
    out = io.StringIO()
    cwd = os.getcwd()
    try:
        with contextlib.redirect_stdout(out):
            rc = house.main(root, list(argv))
        exceptions = open(os.path.join(root, house.EXCEPTIONS), encoding="utf-8").read() if os.path.exists(
            os.path.join(root, house.EXCEPTIONS)
        ) else ""
    finally:
        os.chdir(cwd)
    return rc, out.getvalue(), exceptions


def code_lines(n, prefix="fn f"):
    return "".join(f"{prefix}{i}() {{}}\n" for i in range(n))


CLI = {"crates/prober-cli/src/main.rs": "fn main() {}\n"}

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def counts_code_not_comments_blank_lines_or_tests():
    text = (
        "//! docs\n/* a block\n   comment */\n\n"
        + code_lines(799)
        + "#[cfg(test)]\nfn helper() {}\n"  # counted: a cfg(test) item that is not a test module
        + "#[cfg(test)]\nmod tests {\n"
        + code_lines(500)
        + "}\n"
    )
    rc, out, _ = check({**CLI, "crates/a/src/lib.rs": text})
    assert rc == 1 and "crates/a/src/lib.rs: 801 lines of code" in out, out
    rc, out, _ = check({**CLI, "crates/a/src/lib.rs": text.replace("#[cfg(test)]\nfn helper() {}\n", "")})
    assert rc == 0, out


@case
def code_after_a_test_module_counts_and_is_read():
    # A test module in the middle of a file: only the module is left out; what follows it is code
    # (counted, and its references are import edges), a nested test module inside it too.
    text = (
        code_lines(400)
        + "#[cfg(test)]\nmod tests {\n    mod inner {\n" + code_lines(300) + "    }\n"
        + "    fn t() { let _ = crate::y::Y; }\n}\n"
        + code_lines(401, prefix="fn g")
    )
    files = {**CLI, "crates/a/src/lib.rs": "mod x;\nmod y;\n", "crates/a/src/x.rs": text,
             "crates/a/src/y.rs": "pub struct Y;\npub fn f(_: crate::x::X) {}\n"}
    rc, out, _ = check(files)
    assert rc == 1 and "crates/a/src/x.rs: 801 lines of code" in out, out
    assert "import each other" not in out, out  # the test module's reference to y is no edge
    files["crates/a/src/x.rs"] = text + "pub struct X(crate::y::Y);\n"
    rc, out, _ = check(files)
    assert rc == 1 and "crates/a/src/x.rs:1108 crate::y::Y" in out, out


@case
def a_string_line_is_code():
    text = code_lines(798) + 'const S: &str = "a\n// not a comment\n";\n'
    rc, out, _ = check({**CLI, "crates/a/src/lib.rs": text})
    assert rc == 1 and "801 lines of code" in out, out  # 798, and the string's 3 lines


@case
def a_test_module_file_counts_nothing():
    rc, out, _ = check(
        {
            **CLI,
            "crates/a/src/lib.rs": "#[cfg(test)]\nmod tests;\nfn f() {}\n",
            "crates/a/src/tests.rs": code_lines(900),
        }
    )
    assert rc == 0, out


@case
def a_use_each_way_is_a_circle():
    files = {
        **CLI,
        "crates/a/src/lib.rs": "mod x;\nmod y;\n",
        "crates/a/src/x.rs": "use crate::y::Y;\npub struct X(Y);\n",
        "crates/a/src/y.rs": "pub struct Y;\npub fn f(_: super::x::X) {}\n",
    }
    rc, out, _ = check(files)
    assert rc == 1 and "circle crates/a/src/x.rs crates/a/src/y.rs" in out, out
    assert "crates/a/src/x.rs:1 use crate::y::Y" in out, out
    # Listed, the circle passes; the list is a ratchet, not a ban on the past.
    files["ci/house-exceptions.txt"] = "circle crates/a/src/x.rs crates/a/src/y.rs\n"
    rc, out, _ = check(files)
    assert rc == 0, out


@case
def references_in_comments_strings_and_test_modules_are_not_edges():
    rc, out, _ = check(
        {
            **CLI,
            "crates/a/src/lib.rs": "mod x;\nmod y;\n",
            "crates/a/src/x.rs": "use crate::y::Y;\npub struct X(Y);\n",
            "crates/a/src/y.rs": "//! See [`crate::x::X`].\npub struct Y;\n"
            'const S: &str = "crate::x::X";\n'
            "#[cfg(test)]\nmod tests {\n    use crate::x::X;\n    fn t(_: X) {}\n}\n",
        }
    )
    assert rc == 0, out


@case
def a_re_export_is_a_passage_not_an_edge():
    # lib.rs re-exports x's item and defines one x uses: lib.rs does not use X itself, so no circle;
    # and y naming `crate::X` depends on x.rs, where X is, not on lib.rs.
    files = {
        **CLI,
        "crates/a/src/lib.rs": "mod x;\nmod y;\npub use x::X;\npub struct Root;\n",
        "crates/a/src/x.rs": "pub struct X(crate::Root);\n",
        "crates/a/src/y.rs": "use crate::X;\npub struct Y(X);\n",
    }
    rc, out, _ = check(files)
    assert rc == 0, out
    # Once lib.rs uses what it re-exports, it depends on x.rs: lib.rs <-> x.rs.
    files["crates/a/src/lib.rs"] += "pub fn root(_: X) {}\n"
    rc, out, _ = check(files)
    assert rc == 1 and "circle crates/a/src/lib.rs crates/a/src/x.rs" in out, out


@case
def an_import_used_only_in_a_string_is_an_edge():
    # serde names a function in a string: `deserialize_with = "opt_int"`; the import is still an
    # edge (model.rs <-> x.rs), which a reader of code outside strings alone would miss.
    rc, out, _ = check(
        {
            **CLI,
            "crates/a/src/lib.rs": "mod model;\nmod x;\n",
            "crates/a/src/model.rs": "pub fn opt_int() {}\npub struct M(pub crate::x::X);\n",
            "crates/a/src/x.rs": "use crate::model::opt_int;\n"
            '#[serde(deserialize_with = "opt_int")]\npub struct X;\n',
        }
    )
    assert rc == 1 and "circle crates/a/src/model.rs crates/a/src/x.rs" in out, out


@case
def a_call_into_a_child_module_is_an_edge():
    rc, out, _ = check(
        {
            **CLI,
            "crates/a/src/lib.rs": "mod x;\npub struct Root;\npub fn f() { x::g() }\n",
            "crates/a/src/x.rs": "pub fn g() { let _ = super::Root; }\n",
        }
    )
    assert rc == 1 and "crates/a/src/lib.rs:3 x::g" in out, out


@case
def a_listed_file_may_not_grow_and_must_be_lowered_or_removed():
    listed = "loc crates/a/src/lib.rs 850\n"
    rc, out, _ = check({**CLI, "crates/a/src/lib.rs": code_lines(850), "ci/house-exceptions.txt": listed})
    assert rc == 0, out
    rc, out, _ = check({**CLI, "crates/a/src/lib.rs": code_lines(851), "ci/house-exceptions.txt": listed})
    assert rc == 1 and "grew to 851" in out, out
    rc, out, _ = check({**CLI, "crates/a/src/lib.rs": code_lines(820), "ci/house-exceptions.txt": listed})
    assert rc == 1 and "`loc crates/a/src/lib.rs 820`" in out, out
    rc, out, _ = check({**CLI, "crates/a/src/lib.rs": code_lines(10), "ci/house-exceptions.txt": listed})
    assert rc == 1 and "remove `loc crates/a/src/lib.rs 850` from the list" in out, out


@case
def a_listed_circle_may_not_take_in_a_file():
    files = {
        **CLI,
        "crates/a/src/lib.rs": "mod x;\nmod y;\nmod z;\n",
        "crates/a/src/x.rs": "use crate::y::Y;\npub struct X(Y);\n",
        "crates/a/src/y.rs": "pub struct Y;\npub fn f(_: super::x::X) {}\npub fn g(_: crate::z::Z) {}\n",
        "crates/a/src/z.rs": "pub struct Z;\npub fn h(_: crate::x::X) {}\n",
        "ci/house-exceptions.txt": "circle crates/a/src/x.rs crates/a/src/y.rs\n",
    }
    rc, out, _ = check(files)
    assert rc == 1 and "grew: 3 files" in out and "crates/a/src/z.rs:2 crate::x::X" in out, out


@case
def a_listed_circle_that_is_gone_must_be_removed():
    rc, out, _ = check(
        {
            **CLI,
            "crates/a/src/lib.rs": "mod x;\n",
            "crates/a/src/x.rs": "pub struct X;\n",
            "ci/house-exceptions.txt": "circle crates/a/src/lib.rs crates/a/src/x.rs\n",
        }
    )
    assert rc == 1 and "no longer occurs: remove it from the list" in out, out


@case
def the_command_has_a_budget():
    big = {"crates/prober-cli/src/main.rs": "fn main() {}\n", "crates/prober-cli/src/a.rs": code_lines(700)}
    for i in range(4):
        big[f"crates/prober-cli/src/m{i}.rs"] = code_lines(600)
    rc, out, _ = check(big)
    assert rc == 1 and "3101 lines of code, over the budget" in out and "cli-loc 3101" in out, out
    rc, out, _ = check({**big, "ci/house-exceptions.txt": "cli-loc 3101\n"})
    assert rc == 0, out
    rc, out, _ = check({**big, "ci/house-exceptions.txt": "cli-loc 3100\n"})
    assert rc == 1 and "grew to 3101" in out, out


@case
def update_writes_a_list_that_passes():
    files = {
        **CLI,
        "crates/a/src/lib.rs": "mod x;\nmod y;\n" + code_lines(900),
        "crates/a/src/x.rs": "use crate::y::Y;\npub struct X(Y);\n",
        "crates/a/src/y.rs": "pub struct Y;\npub fn f(_: super::x::X) {}\n",
    }
    root = tree(files)
    cwd = os.getcwd()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            assert house.main(root, ["--update"]) == 0
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = house.main(root, [])
        listed = open(os.path.join(root, house.EXCEPTIONS), encoding="utf-8").read()
    finally:
        os.chdir(cwd)
    assert rc == 0, out.getvalue()
    assert "loc crates/a/src/lib.rs 902\n" in listed and "circle crates/a/src/x.rs crates/a/src/y.rs\n" in listed, listed


def run():
    failed = 0
    for fn in CASES:
        try:
            fn()
            print(f"house self-test: ok   {fn.__name__}")
        except AssertionError as e:
            failed += 1
            print(f"house self-test: FAIL {fn.__name__}: {e}")
    print(f"house self-test: {len(CASES) - failed} of {len(CASES)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run())
