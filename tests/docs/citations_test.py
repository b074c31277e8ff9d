#!/usr/bin/env python3
"""The code's and the docs' pointers lead somewhere:
  - every path a source file, script or document names (shim/..., tests/...,
    docs/..., README.md) exists;
  - every section a file cites as `docs/X.md "Title"` (or README.md) is
    there, as a heading or a bolded paragraph title;
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


def main():
    problems = []
    cache = {}
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
