#!/usr/bin/env python3
"""The house rules of the Rust sources, checked (ci/house.sh runs this; docs/architecture.md says why).

Three limits, over crates/*/src/**/*.rs:

1. No source file over 800 lines of code besides its tests.
   A line of code is a line with something on it besides whitespace and comments: blank lines,
   `//` comments (`///` and `//!` docs too) and lines wholly inside `/* ... */` are not counted; a
   line inside a string literal is. An inline test module (`#[cfg(test)] mod tests { .. }`, from its
   attributes to its closing brace) is tests and not counted, wherever it stands: code after it
   counts as code before it does (and is read for import edges as well). A
   `#[cfg(test)]` on anything else (a helper function, a field, a `mod x;` declaration) does not stop
   the count. A file that its parent declares only under `#[cfg(test)]` (`#[cfg(test)] mod tests;`)
   is all tests and counts 0, as does a file that starts with `#![cfg(test)]`.

2. No module import circle inside a crate. The graph's nodes are files (each module path mapped to
   its file through the `mod` declarations, `#[path]` attributes included, from each crate root:
   src/lib.rs, src/main.rs, src/bin/*); an edge A -> B is a path in A's non-test code that names an
   item of B: a private `use` (always used: CI denies unused imports, and a string may be what
   uses it, as serde's `deserialize_with = "f"`), a `pub use` whose imported name A's code uses (one
   that A does not use itself is a re-export, a passage: it is followed when a path goes through
   it, but is no edge), or a path
   written in the code (`crate::x::Y`, `super::Y`, `self::m::Y`, `child::f()`). A path that ends at an
   item re-exported or imported by a module (`crate::Engine` where lib.rs has
   `pub use engine::Engine`) is followed to the module that defines it. Comments (doc links too) and
   string literals are not read. Every strongly connected component of more than one file is a
   circle, reported with the references that make its edges.

3. The command (crates/prober-cli/src) under 3,000 lines of code in all, counted as in 1 (its tests
   not counted).

Today's exceptions are in ci/house-exceptions.txt, a ratchet: a listed file may stay at its count
but not grow, a listed circle may stay as it is but not take in a file, and the command may stay at
its listed count; an exception that is smaller than listed or gone fails too, with the line to
write instead (or "remove it from the list"), so that the list only shrinks. `--update` rewrites
the list from the tree as it is (for whoever merges a change that moved the counts, not for CI);
`--show` prints every violation, listed or not, with the references that make each circle.
"""

import os
import re
import sys
from collections import defaultdict

MAX_FILE_LOC = 800
CLI_BUDGET = 3000
CLI_DIR = "crates/prober-cli/src"
EXCEPTIONS = "ci/house-exceptions.txt"

CODE, COMMENT, STRING, TEST = 0, 1, 2, 3
TEST_MOD_RE = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def lex(text):
    """Classifies each character as code, comment or string-literal content (quotes are code)."""
    n = len(text)
    cls = bytearray(n)  # CODE by default
    i = 0
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            cls[i:j] = bytes([COMMENT]) * (j - i)
            i = j
        elif c == "/" and text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            cls[i:j] = bytes([COMMENT]) * (j - i)
            i = j
        elif c == "r" or c == "b" or c == '"':
            # Raw strings r"..", r#".."#, br#".."#; byte strings b".."; plain strings "..".
            m = re.compile(r'(?:b?r(#*)")|(?:b?")').match(text, i)
            if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                start = m.end()
                if m.group(1) is not None or m.group(0).endswith('r"'):
                    close = '"' + (m.group(1) or "")
                    j = text.find(close, start)
                    j = n if j < 0 else j
                    cls[start:j] = bytes([STRING]) * (j - start)
                    i = j + len(close)
                else:
                    j = start
                    while j < n and text[j] != '"':
                        j += 2 if text[j] == "\\" else 1
                    cls[start:j] = bytes([STRING]) * (j - start)
                    i = j + 1
            else:
                i += 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}', b'x') or a lifetime ('a): only the former is skipped.
            m = re.compile(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'").match(text, i)
            if m:
                cls[i + 1 : m.end() - 1] = bytes([STRING]) * (m.end() - i - 2)
                i = m.end()
            else:
                i += 1
        else:
            i += 1
    return cls


class Source:
    """One file: its text, what is code, where its tests start, its lines of code."""

    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.cls = lex(self.text)
        # The code as the parser reads it: comments and string contents blanked, offsets kept.
        self.code = "".join(
            ch if k == CODE or ch == "\n" else " " for ch, k in zip(self.text, self.cls)
        )
        # Each inline test module (`#[cfg(test)] mod tests { .. }`) is left out, wherever it is in the
        # file: marked TEST for the count and blanked in `code` for the parser, offsets kept, so that
        # code written after a test module is counted and read like code above it.
        for a, b in self.test_modules():
            self.cls[a:b] = bytes([TEST]) * (b - a)
            self.code = self.code[:a] + re.sub(r"[^\n]", " ", self.code[a:b]) + self.code[b:]
        self.all_tests = re.match(r"\s*#!\[cfg\(test\)\]", self.code) is not None
        self.loc = 0 if self.all_tests else self.count_loc()
        self.total_lines = self.text.count("\n") + (0 if self.text.endswith("\n") else 1)

    def test_modules(self):
        """The (start, end) offsets of each inline `#[cfg(test)]` module, its attributes to its `}`."""
        spans, pos = [], 0
        while True:
            m = TEST_MOD_RE.search(self.code, pos)
            if not m:
                return spans
            end = Crate.match_brace(self.code, m.end() - 1, len(self.code)) + 1
            spans.append((m.start(), end))
            pos = end

    def count_loc(self):
        loc, pos = 0, 0
        for line in self.text.split("\n"):
            if any(not ch.isspace() and self.cls[pos + k] in (CODE, STRING) for k, ch in enumerate(line)):
                loc += 1
            pos += len(line) + 1
        return loc

    def line_of(self, offset):
        return self.text.count("\n", 0, offset) + 1


class Module:
    def __init__(self, name, parent, file, inline_span=None):
        self.name = name
        self.parent = parent
        self.file = file  # the Source it lives in
        self.span = inline_span  # (start, end) offsets in file for inline modules, None for a whole file
        self.children = {}
        self.uses = {}  # bound name -> (module where written, path segments)
        self.globs = []  # (module where written, path segments) of `use x::*`


USE_RE = re.compile(r"(?<![\w:])(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]+);")
MOD_RE = re.compile(
    r"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*([;{])"
)
PATH_RE = re.compile(r"(?<![\w:$])([A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)+)")


def parse_use_tree(tree):
    """`a::{b, c::d as e, f::*}` -> [(['a','b'], 'b'), (['a','c','d'], 'e'), (['a','f'], '*')]."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", tree))
    out = []

    def walk(prefix, s):
        # split s at top-level commas
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        for p in parts:
            if not p:
                continue
            if "{" in p:
                head = p[: p.index("{")]
                inner = p[p.index("{") + 1 : p.rindex("}")]
                segs = [x for x in head.split("::") if x]
                walk(prefix + segs, inner)
                continue
            body, _, alias = p.partition("@")
            alias = alias or None
            segs = prefix + [x for x in body.split("::") if x]
            if not segs:
                continue
            if segs[-1] == "*":
                out.append((segs[:-1], "*"))
            elif segs[-1] == "self":
                out.append((segs[:-1], alias or segs[-2] if len(segs) > 1 else alias))
            else:
                out.append((segs, alias or segs[-1]))

    walk([], tree)
    return out


class Crate:
    def __init__(self, name, root_file, sources):
        self.name = name
        self.sources = sources
        self.root = Module("crate", None, self.source(root_file))
        self.modules = [self.root]
        self.test_only = set()
        self.load(self.root, os.path.dirname(root_file))

    def source(self, path):
        if path not in self.sources:
            self.sources[path] = Source(path)
        return self.sources[path]

    def load(self, module, dir_for_children):
        """Reads a file's module tree: its `mod` declarations (inline and files), its uses."""
        src = module.file
        limit = len(src.code)
        code = src.code
        inline = []  # (start of body, end of body, Module) of each inline module
        for m in MOD_RE.finditer(code, 0, limit):
            attrs, name, kind = m.group(1), m.group(2), m.group(3)
            parent = self.enclosing(inline, module, m.start())
            if kind == "{":
                end = self.match_brace(code, m.end() - 1, limit)
                child = Module(name, parent, src, (m.end(), end))
                parent.children[name] = child
                self.modules.append(child)
                inline.append((m.end(), end, child))
                continue
            # `mod name;`: a file.
            pm = re.search(r'#\[path\s*=\s*"([^"]*)"\s*\]', src.text[m.start() : m.end()])
            base = self.inline_dir(dir_for_children, parent, module)
            if pm:
                file = os.path.normpath(os.path.join(base, pm.group(1)))
            else:
                cand = [os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")]
                file = next((c for c in cand if os.path.exists(c)), None)
            if file is None or not os.path.exists(file):
                continue
            if re.search(r"#\[cfg\(test\)\]", attrs):
                self.test_only.add(file)
                continue
            if name in parent.children and parent.children[name].file.path != file:
                # Two declarations of one module under different cfgs (#[path] per OS): keep both files
                # as one module's; the first is the module, the other is read for its references.
                alt = Module(name, parent, self.source(file))
                self.modules.append(alt)
                self.load(alt, self.child_dir(file))
                continue
            child = Module(name, parent, self.source(file))
            parent.children[name] = child
            self.modules.append(child)
            self.load(child, self.child_dir(file))
        src_modules = getattr(src, "modules", [])
        src.modules = src_modules + [(module, inline)]
        # Uses, each in the module it is written in.
        for m in USE_RE.finditer(code, 0, limit):
            where = self.enclosing(inline, module, m.start())
            for segs, name in parse_use_tree(m.group(2)):
                if segs and segs[0] == "":
                    segs = segs[1:]
                if name == "*":
                    where.globs.append((where, segs, m.start(), bool(m.group(1))))
                elif name and name != "_":
                    where.uses[name] = (where, segs, m.start(), bool(m.group(1)))

    @staticmethod
    def child_dir(file):
        d, base = os.path.split(file)
        if base in ("mod.rs", "lib.rs", "main.rs"):
            return d
        return os.path.join(d, base[:-3])

    @staticmethod
    def inline_dir(dir_for_children, parent, module):
        parts, m = [], parent
        while m is not module and m is not None:
            parts.append(m.name)
            m = m.parent
        return os.path.join(dir_for_children, *parts[::-1])

    @staticmethod
    def enclosing(inline, module, offset):
        best = module
        for start, end, child in inline:
            if start <= offset < end:
                best = child  # later (nested) entries start later, so the last match is innermost
        return best

    @staticmethod
    def match_brace(code, open_at, limit):
        depth = 0
        for i in range(open_at, len(code)):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    return i
        return limit

    def resolve(self, where, segs, depth=0):
        """The module that defines the item `segs` names, seen from module `where`; None if external."""
        if depth > 12 or not segs:
            return None
        first = segs[0]
        if first == "crate":
            cur, rest = self.root, segs[1:]
        elif first == "self":
            cur, rest = where, segs[1:]
        elif first == "super":
            cur, rest = where, segs
            while rest and rest[0] == "super":
                cur = cur.parent or cur
                rest = rest[1:]
            if rest and rest[0] == "self":
                rest = rest[1:]
        elif first in where.children:
            cur, rest = where.children[first], segs[1:]
        elif first in where.uses:
            w, target, _, _ = where.uses[first]
            return self.resolve(w, target + segs[1:], depth + 1)
        else:
            return None  # another crate, std, or a local item (a type's associated path)
        while rest and rest[0] in cur.children:
            cur, rest = cur.children[rest[0]], rest[1:]
        if rest and rest[0] in cur.uses:
            w, target, _, _ = cur.uses[rest[0]]
            further = self.resolve(w, target + rest[1:], depth + 1)
            if further is not None:
                return further
        return cur


def module_words(code):
    return set(re.findall(r"[A-Za-z_]\w*", code))


def crate_graph(crate):
    """Edges between files: (from file, to file) -> [(line, reference)]."""
    edges = defaultdict(list)
    for src in {m.file for m in crate.modules}:
        if src.path in crate.test_only:
            continue
        limit = len(src.code)
        code = src.code[:limit]
        # The code outside use statements, to tell an import that is used from a re-export.
        spans = [(m.start(), m.end()) for m in USE_RE.finditer(code)]
        outside = list(code)
        for a, b in spans:
            outside[a:b] = " " * (b - a)
        outside = "".join(outside)
        words = module_words(outside)
        mine = set(map(id, crate.modules))
        for module, inline in getattr(src, "modules", []):
            if id(module) not in mine:
                continue  # the same file under another root of the package (lib.rs and main.rs)
            owned = [module] + [c for _, _, c in inline]

            def add(target, offset, ref):
                if target is not None and target.file.path != src.path:
                    edges[(src.path, target.file.path)].append((src.line_of(offset), ref))

            for mod in owned:
                for name, (w, segs, offset, public) in mod.uses.items():
                    if w is not mod:
                        continue
                    # A private import is always used (CI denies unused imports), also when
                    # only a string names it (serde's `deserialize_with = "opt_int"`), which
                    # this reader does not read; only a public one may be a mere passage.
                    if name in words or not public:
                        add(crate.resolve(w, segs), offset, "use " + "::".join(segs))
                for w, segs, offset, public in mod.globs:
                    if w is mod and not public:
                        add(crate.resolve(w, segs), offset, "use " + "::".join(segs) + "::*")
            for m in PATH_RE.finditer(outside):
                segs = [s.strip() for s in m.group(1).split("::")]
                where = Crate.enclosing(inline, module, m.start())
                if segs[0] in ("crate", "self", "super") or segs[0] in where.children:
                    add(crate.resolve(where, segs), m.start(), "::".join(segs))
    return edges


def circles(edges):
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph.setdefault(b, set())
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        # Iterative Tarjan: the module graphs are small, but recursion limits are not worth a thought.
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(out)


def measure(root):
    os.chdir(root)
    sources = {}
    crates = []
    for name in sorted(os.listdir("crates")):
        src = os.path.join("crates", name, "src")
        if not os.path.isdir(src):
            continue
        roots = [os.path.join(src, f) for f in ("lib.rs", "main.rs") if os.path.exists(os.path.join(src, f))]
        bindir = os.path.join(src, "bin")
        if os.path.isdir(bindir):
            for f in sorted(os.listdir(bindir)):
                p = os.path.join(bindir, f)
                if f.endswith(".rs"):
                    roots.append(p)
                elif os.path.exists(os.path.join(p, "main.rs")):
                    roots.append(os.path.join(p, "main.rs"))
        for r in roots:
            crates.append(Crate(name, r, sources))
    test_only = set().union(*(c.test_only for c in crates)) if crates else set()
    files = {}
    for name in sorted(os.listdir("crates")):
        for dirpath, _, names in os.walk(os.path.join("crates", name, "src")):
            for f in names:
                if f.endswith(".rs"):
                    p = os.path.join(dirpath, f)
                    s = sources.get(p) or Source(p)
                    sources[p] = s
                    files[p] = 0 if p in test_only else s.loc
    found = []
    for crate in crates:
        edges = crate_graph(crate)
        for comp in circles(edges):
            inside = {(a, b): refs for (a, b), refs in edges.items() if a in comp and b in comp}
            found.append((crate.name, comp, inside))
    # One circle may be found from two roots (lib.rs and main.rs share no modules, but be sure).
    unique, seen = [], set()
    for crate_name, comp, inside in found:
        if tuple(comp) not in seen:
            seen.add(tuple(comp))
            unique.append((crate_name, comp, inside))
    cli = sum(v for p, v in files.items() if p.startswith(CLI_DIR + "/"))
    cli_lines = sum(sources[p].total_lines for p in files if p.startswith(CLI_DIR + "/"))
    return files, unique, cli, cli_lines


def read_exceptions(path):
    loc, circ, cli = {}, {}, None
    if not os.path.exists(path):
        return loc, circ, cli
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] == "loc" and len(words) == 3:
                loc[words[1]] = int(words[2])
            elif words[0] == "circle" and len(words) >= 3:
                circ[tuple(sorted(words[1:]))] = n
            elif words[0] == "cli-loc" and len(words) == 2:
                cli = int(words[1])
            else:
                sys.exit(f"{path}:{n}: not an exception line: {line.rstrip()}")
    return loc, circ, cli


HEADER = """\
# Today's exceptions to the house rules that ci/house.sh checks (docs/architecture.md says why).
# A ratchet: each may stay as it is, none may grow, and one that shrinks or goes must be lowered
# or removed here in the same change (the check prints the line to write). Regenerate after a
# merge that moved the counts: python3 ci/house.py --update
#   loc FILE N        a source file with N lines of code besides its tests (the limit is 800)
#   circle FILE...    files that import each other in a circle (the limit is none)
#   cli-loc N         lines of code in crates/prober-cli/src (the limit is under 3000)
"""


def loc_line(p, n):
    return f"loc {p} {n}"


def circle_line(comp):
    return "circle " + " ".join(comp)


def main(root, argv):
    update = "--update" in argv
    files, found, cli, cli_lines = measure(root)
    over = {p: n for p, n in files.items() if n > MAX_FILE_LOC}
    if update:
        os.makedirs(os.path.dirname(EXCEPTIONS), exist_ok=True)
        with open(EXCEPTIONS, "w", encoding="utf-8") as f:
            f.write(HEADER)
            for p in sorted(over):
                f.write(loc_line(p, over[p]) + "\n")
            for _, comp, _ in found:
                f.write(circle_line(comp) + "\n")
            if cli >= CLI_BUDGET:
                f.write(f"cli-loc {cli}\n")
        print(f"house: wrote {EXCEPTIONS}: {len(over)} files over {MAX_FILE_LOC}, {len(found)} circles, cli {cli}")
        return 0
    show = "--show" in argv  # every violation with its detail, listed or not; no verdict
    allowed_loc, allowed_circ, allowed_cli = ({}, {}, None) if show else read_exceptions(EXCEPTIONS)
    failures = []

    for p in sorted(set(over) | set(allowed_loc)):
        n, allowed = files.get(p, 0), allowed_loc.get(p)
        if allowed is None:
            failures.append(
                f"{p}: {n} lines of code besides its tests, over {MAX_FILE_LOC}: split it by concern"
                f" (an exception is not for new code; the line would be: {loc_line(p, n)})"
            )
        elif n > allowed:
            failures.append(f"{p}: grew to {n} lines of code from its listed {allowed}: split it by concern")
        elif n <= MAX_FILE_LOC:
            failures.append(f"{p}: {n} lines of code, within the limit now: remove `{loc_line(p, allowed)}` from the list")
        elif n < allowed:
            failures.append(f"{p}: shrank to {n} from {allowed}: lower it in the list to `{loc_line(p, n)}`")

    found_keys = {tuple(comp): (crate, comp, inside) for crate, comp, inside in found}
    for key, (crate, comp, inside) in sorted(found_keys.items()):
        if key in allowed_circ:
            continue
        grown = [c for c in allowed_circ if set(c) < set(key)]
        shrunk = [c for c in allowed_circ if set(key) < set(c)]
        if shrunk and not grown:
            # Part of a listed circle is left: progress; the list is to say so.
            failures.append(
                f"{crate}: the listed circle `{circle_line(list(shrunk[0]))}` is down to"
                f" {len(comp)} files: write `{circle_line(comp)}` in its place"
            )
            continue
        what = "grew" if grown else "a new import circle"
        lines = [f"{crate}: {what}: {len(comp)} files that import each other:"]
        for (a, b), refs in sorted(inside.items()):
            line, ref = refs[0]
            more = f" (and {len(refs) - 1} more)" if len(refs) > 1 else ""
            lines.append(f"    {a} -> {b}: {a}:{line} {ref}{more}")
        lines.append(f"  cut it (the line would be: {circle_line(comp)})")
        failures.append("\n".join(lines))
    for key in sorted(allowed_circ):
        if key not in found_keys:
            if any(set(k) < set(key) or set(key) < set(k) for k in found_keys):
                continue  # said above, with the circle it became
            failures.append(f"`{circle_line(list(key))}`: no longer occurs: remove it from the list")

    if allowed_cli is None:
        if cli >= CLI_BUDGET:
            failures.append(
                f"{CLI_DIR}: {cli} lines of code, over the budget of {CLI_BUDGET}: the command only"
                f" parses, wires and prints; move the rest into the library (the line would be: cli-loc {cli})"
            )
    elif cli > allowed_cli:
        failures.append(f"{CLI_DIR}: grew to {cli} lines of code from its listed {allowed_cli}: move code into the library")
    elif cli < CLI_BUDGET:
        failures.append(f"{CLI_DIR}: {cli} lines of code, under the budget now: remove `cli-loc {allowed_cli}` from the list")
    elif cli < allowed_cli:
        failures.append(f"{CLI_DIR}: shrank to {cli} from {allowed_cli}: lower it in the list to `cli-loc {cli}`")

    for f in failures:
        print("house: " + f)
    print(
        f"house: {len(files)} files; {len(over)} over {MAX_FILE_LOC} lines of code"
        f" ({len(allowed_loc)} listed); {len(found)} import circles ({len(allowed_circ)} listed);"
        f" prober-cli {cli} lines of code in {cli_lines} lines (budget {CLI_BUDGET}"
        f"{', listed ' + str(allowed_cli) if allowed_cli is not None else ''});"
        f" {len(failures)} failures"
    )
    return 1 if failures and not show else 0


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(os.path.join(os.path.dirname(__file__), "..")), sys.argv[1:]))
