# Sphinx configuration of the plancert manual.
#
# This file holds no build paths. docs/CMakeLists.txt runs Sphinx (under
# /usr/bin/python3, where Debian's sphinx and breathe import) on a copy of
# docs/ in the build tree and passes
#   -D breathe_projects.plancert=<Doxygen XML dir> -D breathe_default_project=plancert
#   -D version=<project version> -D release=<project version>
# Build it with:  cmake --build build --target docs

project = "plancert"
author = "the plancert authors"
copyright = "the plancert authors"
version = release = ""  # set by CMake from project(VERSION)

extensions = [
    "sphinx.ext.mathjax",
    "breathe",
]

master_doc = "index"
source_suffix = {".rst": "restructuredtext"}
# _generated/ holds fragments that pages include; they are not pages themselves.
exclude_patterns = ["_generated", "_build", "Thumbs.db", ".DS_Store"]
primary_domain = "cpp"
highlight_language = "none"
cpp_index_common_prefix = ["plancert::"]

# --- Breathe (C++ API from Doxygen XML) ---
breathe_projects = {}  # filled in by -D breathe_projects.plancert=...
breathe_default_project = "plancert"
breathe_domain_by_extension = {"h": "cpp"}
breathe_default_members = ("members",)
breathe_show_include = True

# --- Math: Debian's MathJax 2 (libjs-mathjax), rendered offline ---
# The docs target copies /usr/share/javascript/mathjax into html/_static/mathjax;
# a relative mathjax_path is resolved against _static/.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML"
mathjax_options = {"async": "async"}

# --- HTML ---
html_theme = "alabaster"
html_title = "plancert"
html_static_path = []
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
# A wider page: help texts, schemas and formulas are wide.
html_theme_options = {"page_width": "1180px", "sidebar_width": "250px"}
# Keep "--option" and quotes as written: this manual quotes command lines and JSON.
smartquotes = False
