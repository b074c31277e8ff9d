#!/usr/bin/env python3
"""The code's and the docs' pointers lead somewhere:
  - every path a source file, script or document names (shim/..., tests/...,
    docs/..., README.md) exists;
  - every section a file cites as `docs/X.md "Title"` (or README.md) is
    there, as a heading or a bolded paragraph title;
  - every name a file cites with its source ("`Admit` in
    shim/move/admission.cc", "`EndLink`, `shim/agent/agent_serve.cc`",
    "`FinishCall` (`shim/intercept/finish_call.h`)",
    "(shim/agent/agent.cc: SleepWhileStoodIn)") is defined or declared
    there, as far as a look at the file's lines can tell (a call of it
    is not enough);
  - docs/how-it-works.md's Layout names every folder of shim/ and every
    file in them, and no source sits in shim/ itself.
Run from Bazel (the repository is found through this file's real path) or
by hand: python3 tests/docs/citations_test.py."""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(
    os.path.dirname(os.path.realpath(__file__)), "..", ".."))
SCANNED = ("shim", "include", "tests", "bench", "scripts", "tools", "docs")
SUFFIXES = (".h", ".cc", ".c", ".py", ".sh", ".md", ".bzl", "BUILD", ".f90")
# A path into the repository, not the tail of a longer one (PREFIX/include/
# rmashim/rmashim.h names an installed file) nor a pattern (SUITE_TOPIC).
PATH = re.compile(
    r"(?<![\w/.$-])((?:shim|include|tests|bench|scripts|tools|docs)/"
    r"[a-z0-9_./-]+\.(?:h|cc|c|py|sh|md|bzl)|README\.md)(?![\w.-])")
SECTION = re.compile(r'((?:docs/[\w-]+\.md)|README\.md),? "([^"]+)"')
# A name cited with the source that has it. `Name` (a C or C++ identifier,
# maybe qualified, maybe with "()"), or a list of them joined by commas or
# "and", then ", ", " in " or " (" and the source, in backticks or not:
#   `Admit` in shim/move/admission.cc;  `EndLink`, `shim/agent/agent_serve.cc`
#   `LoseLinkTo` and `OnPeerError`, `shim/agent/ucx_transport.cc`
#   `FinishCall` (`shim/intercept/finish_call.h`)
# or, in parentheses, the source, a colon and a capitalized name:
#   (shim/agent/agent.cc: SleepWhileStoodIn)
NAME = r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\(\))?"
SOURCE = (r"(?:shim|include|tests|bench|scripts|tools)/[a-z0-9_./-]+"
          r"\.(?:h|cc|c|py|sh)")
SOURCE_END = r"`?(?=[`),;:\s]|\.(?:\s|$))"
NAMED_IN = re.compile(
    r"((?:`%s`(?:,\s*and\s+|,\s*|\s+and\s+))*`%s`)(?:,\s*|\s+in\s+|\s*\(\s*)"
    r"`?(%s)%s" % (NAME, NAME, SOURCE, SOURCE_END))
IN_NAMED = re.compile(
    r"\(\s*`?(%s)`?:\s*`?([A-Z]\w*(?:::[A-Za-z_]\w*)*)`?\s*[;,)]" % SOURCE)
# MPI's own names are MPI's, whichever source mentions them.
MPI_NAME = re.compile(r"P?MPIX?_")
# The first word of a line that calls a name rather than declares it.
STATEMENT_WORDS = {"return", "else", "case", "delete", "throw", "goto",
                   "co_return", "new", "sizeof", "if", "while", "for",
                   "switch", "do", "not", "and", "or"}


def files():
    yield os.path.join(ROOT, "README.md")
    for top in SCANNED:
        for d, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [x for x in dirs if x not in ("__pycache__",)]
            for n in names:
                if n.endswith(SUFFIXES):
                    yield os.path.join(d, n)


def titles(doc):
    """Headings and bolded paragraph titles of a Markdown file."""
    with open(doc, errors="replace") as f:
        text = f.read()
    found = set(m.group(1).strip() for m in re.finditer(r"^#+ +(.+)$", text, re.M))
    found |= set(m.group(1).strip() for m in re.finditer(r"\*\*([^*]+)\*\*", text))
    return found, text


def defines(body, source, name):
    """Whether `body`, the text of `source`, defines or declares `name`: a
    line that starts with a type or other declaration words and then the
    name (a function, variable, member or constant), the name at the start
    of a line before "(" (a definition whose type is on the line above),
    before "=" or "," alone on its line (an enumerator), after class,
    struct, enum, using, namespace or typedef, a #define, a GoogleTest
    TEST(Name, ...) or TEST(Suite, Name); in Python a def, class or
    top-level assignment, in shell a function or assignment."""
    n = re.escape(name)
    if source.endswith(".py"):
        return re.search(r"^\s*(?:def|class)\s+%s\b|^%s\s*=" % (n, n),
                         body, re.M) is not None
    if source.endswith(".sh"):
        return re.search(r"^\s*(?:function\s+)?%s\s*\(\)|^\s*(?:local\s+|readonly\s+)?%s="
                         % (n, n), body, re.M) is not None
    for m in re.finditer(r"^[ \t]*((?:[\w:<>\[\],]+[ \t*&]+)+)(?:\w+::)*%s\s*"
                         r"(?:\(|\{|=|;|\[|,|:|$)" % n, body, re.M):
        if m.group(1).split()[0].rstrip("*&") not in STATEMENT_WORDS:
            return True
    return any(re.search(p, body, re.M) for p in (
        r"^(?:\w+::)*%s\s*\(" % n,
        r"^[ \t]*%s\s*(?:=[^=]|,|$)" % n,
        r"\b(?:class|struct|enum|union|using|namespace|typedef)\s+"
        r"(?:\w+\s+)*%s\b" % n,
        r"#\s*define\s+%s\b" % n,
        r"\bTEST\w*\(\s*(?:\w+\s*,\s*)?%s\s*[,)]" % n))


def cited_names(flat):
    """(name, source) for every name `flat` cites with its source."""
    for m in NAMED_IN.finditer(flat):
        for name in re.findall(r"`(%s)`" % NAME, m.group(1)):
            yield name, m.group(2)
    for m in IN_NAMED.finditer(flat):
        yield m.group(2), m.group(1)


def main():
    problems = []
    cache = {}
    sources = {}
    for path in files():
        rel = os.path.relpath(path, ROOT)
        with open(path, errors="replace") as f:
            text = f.read()
        for m in PATH.finditer(text):
            target = m.group(1).rstrip(".")
            if not os.path.exists(os.path.join(ROOT, target)):
                problems.append("%s: names %s, which does not exist" % (rel, target))
        # Section citations may wrap over a comment's lines.
        flat = re.sub(r"\s*\n\s*(?://|#)?\s*", " ", text)
        for m in SECTION.finditer(flat):
            doc, title = m.group(1), m.group(2)
            where = os.path.join(ROOT, doc)
            if not os.path.exists(where):
                continue  # reported above
            if doc not in cache:
                cache[doc] = titles(where)
            heads, body = cache[doc]
            if not any(h == title or h.startswith(title) for h in heads):
                problems.append('%s: cites %s "%s", which has no such section'
                                % (rel, doc, title))
        for name, source in cited_names(flat):
            bare = name.rstrip("()").split("::")[-1]
            where = os.path.join(ROOT, source)
            if MPI_NAME.match(bare) or not os.path.isfile(where):
                continue  # MPI's, or reported above
            if source not in sources:
                with open(where, errors="replace") as f:
                    sources[source] = f.read()
            if not defines(sources[source], source, bare):
                problems.append("%s: cites `%s` in %s, which does not define or "
                                "declare it" % (rel, name, source))
    # The Layout of docs/how-it-works.md names every folder of shim/ and
    # every file in it; no source sits in shim/ itself (the folders are the
    # concerns).
    with open(os.path.join(ROOT, "docs", "how-it-works.md")) as f:
        how = f.read()
    layout = how[how.index("## Layout"):]
    named = set(re.findall(r"`([a-z_]+)(?:/|\.lds)?`", layout))
    shim = os.path.join(ROOT, "shim")
    for n in sorted(os.listdir(shim)):
        stem, ext = os.path.splitext(n)
        if ext in (".h", ".cc"):
            problems.append("shim/%s: a source outside shim/'s folders" % n)
        if not os.path.isdir(os.path.join(shim, n)) or n == "dart":
            continue
        if n not in named:
            problems.append("docs/how-it-works.md: Layout does not name shim/%s/" % n)
        for f in sorted(os.listdir(os.path.join(shim, n))):
            stem, ext = os.path.splitext(f)
            if ext in (".h", ".cc", ".lds") and stem not in named:
                problems.append("docs/how-it-works.md: Layout does not name shim/%s/%s"
                                % (n, f))
    for p in sorted(set(problems)):
        print(p)
    print("%d problems" % len(set(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
