#!/usr/bin/env python3
"""Checks every link of the project's Markdown files: README.md, docs/, ui-tests/ and
rpar/src/transport/README.md.

- A link into the rustdoc (a relative path to target/doc/rpar/..., what
  `cargo doc -p rpar --no-deps --features mpi` writes) must name a page that exists, and its
  #fragment (a method, field, variant or heading) must be an id on that page. The docs link to
  the API this way because a reader can open it: the crate called `rpar` on crates.io, and so
  on docs.rs, is an unrelated program, and a link there is reported as broken.
- Any other relative link must name a file or folder of the worktree; a #fragment of a Markdown
  file must be one of its headings (GitHub's rule: lower case, spaces to hyphens, punctuation
  dropped).
- Other web links are counted, not fetched (the checker works offline).

Run from anywhere, after `cargo doc -p rpar --no-deps --features mpi` (the `rpar::mpi` pages
exist only with the feature):

    python3 docs/check_links.py

Prints each broken link with its file and line, then a count; exits 1 if any is broken.
"""
import html
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "target" / "doc"
# docs.rs serves another crate under the name rpar: never a link to ours
FOREIGN = "https://docs.rs/rpar"
FILES = ["README.md", "rpar/src/transport/README.md"] + [
    str(p.relative_to(ROOT)) for d in ("docs", "ui-tests") for p in sorted((ROOT / d).rglob("*.md"))
]
# [text](target) with an optional "title", and reference definitions: [name]: target
INLINE = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"`|\*\*?|__?", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors_of_markdown(path):
    out, fenced = set(), False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
            out.add(slug(m.group(1)))
    return out


_ids = {}


def ids_of_page(page):
    if page not in _ids:
        text = page.read_text(errors="replace")
        _ids[page] = {html.unescape(i) for i in re.findall(r'\bid="([^"]+)"', text)}
    return _ids[page]


def check_rustdoc_page(dest, fragment):
    """A page of the rustdoc under target/doc, and its #fragment."""
    if not dest.is_file():
        inner = dest.relative_to(DOC).as_posix()
        hint = " --features mpi" if inner.startswith("rpar/mpi/") else ""
        return f"no page target/doc/{inner} (is it documented? cargo doc -p rpar --no-deps{hint})"
    if fragment and fragment not in ids_of_page(dest):
        return f"no #{fragment} on {dest.relative_to(ROOT)}"
    return None


def check_relative(source, target):
    path, _, fragment = target.partition("#")
    dest = (source.parent / path).resolve() if path else source
    if dest.is_relative_to(DOC):
        return check_rustdoc_page(dest, fragment)
    if not dest.exists():
        return f"no file {path}"
    if fragment and dest.suffix == ".md" and fragment not in anchors_of_markdown(dest):
        return f"no heading #{fragment} in {dest.relative_to(ROOT)}"
    return None


def links(path):
    fenced = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)) if "](" not in m.group(0) else m.group(0), line)
        for m in INLINE.finditer(line):
            yield number, m.group(1)
        if m := REFDEF.match(line):
            yield number, m.group(1)


def main():
    if not (DOC / "rpar" / "index.html").is_file():
        print("target/doc/rpar/index.html is missing: run cargo doc -p rpar --no-deps --features mpi first")
        return 1
    checked = broken = web = 0
    for name in FILES:
        source = ROOT / name
        for number, target in links(source):
            if target.startswith(FOREIGN):
                problem = "docs.rs/rpar is another crate: link to target/doc/rpar/ (the rustdoc)"
            elif re.match(r"^[a-z]+:", target):
                web += 1
                continue
            else:
                problem = check_relative(source, target)
            checked += 1
            if problem:
                broken += 1
                print(f"{name}:{number}: {target}: {problem}")
    print(f"{checked} links checked, {broken} broken; {web} other web links not fetched")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
