# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers of tools/docs-site.sh (the collection's documentation site, built with antsibull-docs and Sphinx).

guides COLLECTION_DIR
    The Markdown guides (README.md, docs/*.md and docs/families/*.md) become antsibull-docs "extra docs" of the staged collection:
    docs/docsite/extra-docs.yml and one docs/docsite/rst/<name>.rst per guide. Each page's title is the guide's
    first heading; its body is the guide rendered by markdown-it-py (CommonMark with tables, as GitHub shows it)
    into a ``raw:: html`` block, with heading ids as GitHub makes them, code highlighted by Pygments, links to
    other guides pointing at their pages and links to other repository files at the repository (galaxy.yml).
    A link to a file that does not exist, or to a heading that does not exist, is reported as a WARNING line
    (tools/docs-site.sh fails on it).

inventory FILE
    A Sphinx inventory standing in for docs.ansible.com's (this machine cannot fetch it): the Ansible
    documentation labels that antsibull-docs' pages refer to, so that those references resolve to the real
    pages. A new label shows up as Sphinx's "undefined label" warning: add it to ANSIBLE_LABELS.
"""

import html
import os
import posixpath
import re
import sys
import zlib

import yaml
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter  # pylint: disable=no-name-in-module
from pygments.lexers import get_lexer_by_name  # pylint: disable=no-name-in-module
from pygments.util import ClassNotFound

COLLECTION = "accelops.lifecycle"
LABEL_PREFIX = "ansible_collections.%s.docsite." % COLLECTION
ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/devel/"
# label: (page and anchor under ANSIBLE_DOCS, title)
ANSIBLE_LABELS = {
    "common_return_values": ("reference_appendices/common_return_values.html#common-return-values", "Return Values"),
    "ansible_configuration_settings": ("reference_appendices/config.html#ansible-configuration-settings",
                                       "Ansible Configuration Settings"),
    # a module with a corresponding action plugin (the controller actions, nvidia_mig)
    "action_plugins": ("plugins/action.html#action-plugins", "Action plugins"),
}


def slug(text, seen):
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces to dashes, -N for repeats."""
    base = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
    out = base
    n = 0
    while out in seen:
        n += 1
        out = "%s-%d" % (base, n)
    seen.add(out)
    return out


def inline_text(token):
    return "".join(c.content for c in token.children or [] if c.type in ("text", "code_inline"))


def render_fence(self, tokens, idx, _options, _env):
    """A fenced code block as Sphinx writes one (its Pygments classes, styled by the theme's pygments.css)."""
    tok = tokens[idx]
    lang = tok.info.split()[0] if tok.info.strip() else "text"
    try:
        lexer = get_lexer_by_name(lang)
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    code = highlight(tok.content, lexer, HtmlFormatter(nowrap=True))
    return '<div class="highlight-%s notranslate"><div class="highlight"><pre>%s</pre></div></div>\n' % (
        html.escape(lexer.aliases[0] if lexer.aliases else "text"), code)


class Guides:
    def __init__(self, coll):
        self.coll = coll
        with open(os.path.join(coll, "galaxy.yml")) as f:
            self.repo_url = yaml.safe_load(f)["repository"].rstrip("/")
        docs = sorted(n for n in os.listdir(os.path.join(coll, "docs")) if n.endswith(".md"))
        families = os.path.join(coll, "docs", "families")
        if os.path.isdir(families):
            docs += sorted("families/" + n for n in os.listdir(families) if n.endswith(".md"))
        # repository path -> page name
        self.pages = {"README.md": "readme"}
        self.pages.update(("docs/" + n, re.sub(r"[^a-z0-9_]", "_", n[:-3].lower())) for n in docs)
        self.md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
        self.md.add_render_rule("fence", render_fence)
        self.md.add_render_rule("code_block", render_fence)
        self.ids = {}
        self.warnings = []

    def parse(self, path):
        with open(os.path.join(self.coll, path), encoding="utf-8") as f:
            tokens = self.md.parse(f.read())
        seen = set()
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open":
                tok.attrSet("id", slug(inline_text(tokens[i + 1]), seen))
            elif tok.type == "table_open":
                tok.attrSet("class", "docutils align-default")
        self.ids[path] = seen
        return tokens

    def link(self, src, href):
        """Where a link of the guide src goes on the site."""
        # the README links to the repository by absolute URL (it is Galaxy's page too): a guide's stays on the site
        blob = self.repo_url + "/blob/main/"
        if href.startswith(blob) and href[len(blob):].partition("#")[0] in self.pages:
            href = posixpath.relpath(href[len(blob):], posixpath.dirname(src) or ".")
        if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I):
            return href
        target, dummy, frag = href.partition("#")
        path = posixpath.normpath(posixpath.join(posixpath.dirname(src), target)) if target else src
        if path in self.pages:
            if frag and frag not in self.ids[path]:
                self.warnings.append("%s: link %s: %s has no heading with the id %r" % (src, href, path, frag))
            return ("%s.html" % self.pages[path] if target else "") + ("#" + frag if frag else "")
        full = os.path.join(self.coll, path)
        if path.startswith("..") or not os.path.exists(full):
            self.warnings.append("%s: link %s: %s does not exist in the collection" % (src, href, path))
            return href
        kind = "tree" if os.path.isdir(full) else "blob"
        return "%s/%s/main/%s%s" % (self.repo_url, kind, path, "#" + frag if frag else "")

    def page(self, path, tokens):
        title = None
        if tokens and tokens[0].type == "heading_open" and tokens[0].tag == "h1":
            title = inline_text(tokens[1])
            tokens = tokens[3:]
            if path == "README.md":
                title = "Overview (README)"
        else:
            self.warnings.append("%s: does not start with a level-1 heading (the page title)" % path)
            title = path
        for tok in tokens:
            for child in tok.children or []:
                if child.type == "link_open":
                    child.attrSet("href", self.link(path, child.attrGet("href")))
        body = self.md.renderer.render(tokens, self.md.options, {})
        name = self.pages[path]
        source = "%s/blob/main/%s" % (self.repo_url, path)
        lines = [
            ".. Generated by tools/docs_site.py from %s: edit that file, not this one." % path,
            "",
            ".. _%s%s:" % (LABEL_PREFIX, name),
            "",
            title.replace("*", r"\*").replace("`", r"\`"),
            "=" * max(len(title), 3),
            "",
            # (no named hyperlink targets: antsibull-docs drops a page with a label outside LABEL_PREFIX)
            "*From* `%s <%s>`__ *in the collection's repository.*" % (path, source),
            "",
            ".. raw:: html",
            "",
        ]
        lines += ["   " + line if line else "" for line in body.splitlines()]
        return name, title, "\n".join(lines) + "\n"

    def write(self):
        parsed = [(p, self.parse(p)) for p in self.pages]
        rst_dir = os.path.join(self.coll, "docs", "docsite", "rst")
        os.makedirs(rst_dir, exist_ok=True)
        toctree = []
        for path, tokens in parsed:
            name, _title, text = self.page(path, tokens)
            with open(os.path.join(rst_dir, name + ".rst"), "w", encoding="utf-8") as f:
                f.write(text)
            toctree.append(name)
        index = {"sections": [{"title": "Guides", "toctree": toctree}]}
        with open(os.path.join(self.coll, "docs", "docsite", "extra-docs.yml"), "w") as f:
            f.write("---\n# Generated by tools/docs_site.py from README.md, docs/*.md and docs/families/*.md\n")
            yaml.safe_dump(index, f, sort_keys=False, width=1000)
        for w in self.warnings:
            print("WARNING: guides: %s" % w)
        print("guides: %d pages (%s)" % (len(toctree), ", ".join(self.pages)))


def write_inventory(path):
    lines = ["%s std:label -1 %s %s" % (label, uri, html.escape(title, quote=False))
             for label, (uri, title) in sorted(ANSIBLE_LABELS.items())]
    header = "# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n" \
             "# The remainder of this file is compressed using zlib.\n"
    with open(path, "wb") as f:
        f.write(header.encode() + zlib.compress(("\n".join(lines) + "\n").encode()))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "guides":
        Guides(sys.argv[2]).write()
    elif len(sys.argv) == 3 and sys.argv[1] == "inventory":
        write_inventory(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
