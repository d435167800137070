// SPDX-License-Identifier: Apache-2.0
// plancert-docgen: writes the generated pages of the manual (reST fragments that the static
// pages in docs/ include). The docs target runs it (docs/docs_steps.cmake).
//
//   plancert-docgen check                                   compare every declared formula
//   plancert-docgen passes                                  list the registered passes
//   plancert-docgen formulas --out F                        the "Pass formulae and API" body
//   plancert-docgen cli --plancert BIN --out F              the CLI reference body
//   plancert-docgen schemas --schemas DIR --out F           the IR reference body
//   plancert-docgen readme --readme README.md --section S --out F
//                                                           one section of the README
//
// `formulas` refuses to write anything when a declared formula differs from what its pass
// derives. Exit codes: 0 done, 1 a declared formula differs from the code (or a generator
// input is unusable), 2 bad usage. Outputs are written to a temporary file and renamed.
#include "passes/formulas/formulas.h"
#include "passes/formulas/latex.h"

#include "spec/checked.h"
#include "verifiers/gate.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <utility>
#include <variant>

namespace fs = std::filesystem;
using namespace plancert;
using namespace plancert::formulas;

namespace {

struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- small text helpers -----------------------------------------------------------------------

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Failure("cannot read " + p.string());
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void write_atomic(const fs::path& out, const std::string& text) {
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  fs::path tmp = out;
  tmp += ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o) throw Failure("cannot write " + tmp.string());
    o << text;
    if (!o.flush()) throw Failure("cannot write " + tmp.string());
  }
  fs::rename(tmp, out);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) line.pop_back();
    out.push_back(line);
  }
  return out;
}

// Inline reST text that renders literally.
std::string esc(const std::string& text) {
  static const std::string kMarkup = "\\`*_|[]<>:";
  std::string out;
  for (char c : text) {
    if (kMarkup.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string underline(const std::string& title, char c) {
  std::size_t width = 0;
  for (const char ch : title)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++width;  // count UTF-8 code points
  return std::string(std::max<std::size_t>(width, 3), c);
}

// The boundary with an arrow: "A -> B" as "A → B".
std::string arrow(std::string s) {
  for (std::size_t p; (p = s.find("->")) != std::string::npos;) s.replace(p, 2, "\u2192");
  return s;
}

void code_block(std::ostringstream& o, const std::string& language, const std::string& text) {
  o << ".. code-block:: " << language << "\n\n";
  for (const auto& l : lines_of(text)) o << (l.empty() ? "" : "   " + l) << "\n";
  o << "\n";
}

// ---- formulas ---------------------------------------------------------------------------------

// Variant index of the snapshot type whose payload schema is `name` (AnySnapshot order).
template <std::size_t... I>
std::optional<std::size_t> layer_index(std::string_view name, std::index_sequence<I...>) {
  std::optional<std::size_t> out;
  ((decltype(std::declval<std::variant_alternative_t<I, AnySnapshot>>().payload)::kSchema == name ? (out = I, 0) : 0), ...);
  return out;
}
std::optional<std::size_t> layer_index(std::string_view name) { return layer_index(name, std::make_index_sequence<std::variant_size_v<AnySnapshot>>{}); }

std::string instance_text(const Bindings& b) {
  if (b.empty()) return "no bindings";
  std::string s;
  for (const auto& [k, v] : b) s += (s.empty() ? "" : ",\\ ") + latex_symbol(k, LatexStyle::standard()) + "=" + std::to_string(v);
  return ":math:`" + s + "`";
}

std::string formula_math(const DeclaredFormula& f) {
  const auto style = LatexStyle::standard();
  std::string factored = to_latex_fraction(f.rhs, f.denominator, style);
  std::string expanded = to_latex_expanded(f.rhs, f.denominator, style);
  std::string m = f.latex_lhs + " = " + factored;
  if (expanded != factored) m += " = " + expanded;
  return m;
}

int cmd_check() {
  auto checks = check_all();
  int bad = 0;
  for (const auto& c : checks) {
    std::cout << (c.ok() ? "ok    " : "DRIFT ") << describe(c) << "\n";
    bad += c.ok() ? 0 : 1;
  }
  std::cout << checks.size() << " comparisons, " << bad << " differ\n";
  return bad ? 1 : 0;
}

int cmd_passes() {
  for (const auto& p : pass_docs()) std::cout << p.name << "\n";
  return 0;
}

std::string formulas_page() {
  auto checks = check_all();
  std::size_t bad = 0;
  for (const auto& c : checks)
    if (!c.ok()) {
      std::cerr << "plancert-docgen: declared formula differs from the code: " << describe(c) << "\n";
      ++bad;
    }
  if (bad) throw Failure(std::to_string(bad) + " of " + std::to_string(checks.size()) + " comparisons differ; the formulas page is not written");

  const auto& docs = pass_docs();
  std::size_t nformulas = 0;
  for (const auto& p : docs) nformulas += p.formulas.size();
  std::ostringstream o;
  o << ".. This fragment is generated by plancert-docgen (passes/formulas/docgen.cpp) from the pass registry\n"
       "   and the declared closed forms in passes/formulas/; edit those, not this file.\n\n";
  o << "Coverage and provenance\n-----------------------\n\n";
  o << ".. list-table::\n   :header-rows: 1\n   :widths: 24 18 30 28\n\n";
  o << "   * - Pass\n     - Boundary\n     - Formula provenance\n     - Commit evidence\n";
  for (const auto& p : docs) {
    o << "   * - :ref:`" << p.name << " <pass-" << p.name << ">`\n";
    o << "     - " << esc(arrow(p.boundary)) << "\n";
    o << "     - " << esc(p.provenance) << "\n";
    o << "     - " << p.evidence << "\n";
  }
  o << "\n";
  o << "The page shows " << nformulas << " declared closed forms of " << docs.size()
    << " passes. Each is rendered from the exact expression the code declares (``passes/formulas/``), "
       "first factored, then term by term when that reads differently. When this page was generated, every one "
       "was compared with what its pass derives when run with a symbolic workload (:math:`B` and :math:`s` for "
       "training, :math:`b` and :math:`c` for inference), or at the concrete values an instance binds, at each listed "
       "instantiation of the other symbols: "
    << checks.size()
    << " comparisons, all exactly equal (``Expr`` equality of polynomials over the rationals). A declared form that "
       "differs from the code stops the documentation build, and the no-drift test ``FormulasNoDrift.*`` (ctest label ``docs``) "
       "runs the same comparison.\n\n";

  std::vector<std::string> sources;
  for (const auto& p : docs) {
    const std::string title = p.title + ": " + p.name;
    o << ".. _pass-" << p.name << ":\n\n" << title << "\n" << underline(title, '-') << "\n\n";
    o << ":Pass: ``" << p.name << "``\n";
    o << ":Boundary: " << esc(arrow(p.boundary)) << "\n";
    o << ":Formula provenance: " << esc(p.provenance) << "\n";
    o << ":Implemented by: ``" << p.cpp_symbol << "`` (``" << p.header << "``)\n";
    if (auto layer = layer_index(p.output_ir)) {
      std::string ids;
      for (auto id : obligations_checked(*layer, !p.root)) ids += (ids.empty() ? "" : ", ") + std::string(":ref:`") + std::string(id) + " <obligation-" + std::string(id) + ">`";
      o << ":Checked at commit: " << ids << " (the gate's obligations for " << (p.root ? "a root " : "a child ") << "``" << p.output_ir << "``)\n";
    }
    o << ":Further evidence: " << p.evidence << "\n\n";

    o << "Declared closed forms\n~~~~~~~~~~~~~~~~~~~~~\n\n";
    for (const auto& f : p.formulas) {
      o << ".. _formula-" << p.name << "-" << f.name << ":\n\n";
      o << "``" << f.name << "``: " << f.description << "\n\n";
      o << ".. math::\n\n   " << formula_math(f) << "\n\n";
      if (!f.where.empty()) {
        std::string w;
        for (const auto& [name, def] : f.where)
          w += (w.empty() ? "" : ", ") + std::string(":math:`") + latex_symbol(name, LatexStyle::standard()) + " = " + to_latex(def) + "`";
        o << "where " << w << ".\n\n";
      }
      o << "Derived by the code as:\n\n";
      for (const auto& d : f.derivations) {
        std::string at;
        for (const auto& b : d.instances) at += (at.empty() ? "" : "; ") + instance_text(b);
        o << "- " << d.what << "; compared at " << at << ".\n";
      }
      o << "\n";
    }
    o << "Source documentation\n~~~~~~~~~~~~~~~~~~~~\n\n";
    o << "The doc comment of the implementing function, from ``" << p.header << "`` (Doxygen and Breathe):\n\n";
    // The API reference declares the same function; Sphinx's C++ domain reports a second
    // declaration in the same scope as a duplicate even with :no-link:, so this copy lives in
    // a scope of its own.
    o << ".. cpp:namespace-push:: pass_formulae\n\n";
    o << ".. doxygenfunction:: " << p.cpp_symbol << "\n   :project: plancert\n   :no-link:\n\n";
    o << ".. cpp:namespace-pop::\n\n";
    o << "References\n~~~~~~~~~~\n\n";
    for (const auto& r : p.references) {
      o << "- " << r << "\n";
      if (std::find(sources.begin(), sources.end(), r) == sources.end()) sources.push_back(r);
    }
    o << "\n";
  }
  o << "Research sources\n----------------\n\n";
  for (const auto& r : sources) o << "- " << r << "\n";
  o << "\nThese papers establish where the formulas come from; the gate's obligations and the tests, not the "
       "citations, establish what this implementation preserves.\n";
  return o.str();
}

// ---- CLI reference ----------------------------------------------------------------------------

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `bin args... 2>&1` and returns its output; the exit status must be 0.
std::string run_help(const std::string& bin, const std::vector<std::string>& args) {
  std::string cmd = shell_quote(bin);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) throw Failure("cannot run " + cmd);
  std::string out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), f)) > 0;) out.append(buf.data(), n);
  int status = pclose(f);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Failure(cmd + " did not exit with 0:\n" + out);
  // The program prints its own path in "Usage:"; the manual says `plancert`.
  for (std::size_t p; (p = out.find(bin)) != std::string::npos;) out.replace(p, bin.size(), "plancert");
  return out;
}

// Names of the subcommands listed in a CLI11 help text ("Subcommands:" / "SUBCOMMANDS:").
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& l : lines_of(help)) {
    if (l == "Subcommands:" || l == "SUBCOMMANDS:") { in = true; continue; }
    if (!in) continue;
    if (l.empty() || l[0] != ' ') { in = false; continue; }
    std::size_t b = l.find_first_not_of(' ');
    out.push_back(l.substr(b, l.find(' ', b) - b));
  }
  return out;
}

std::string cli_page(const std::string& bin) {
  std::ostringstream o;
  o << ".. This fragment is generated by plancert-docgen from the help texts of the built plancert program\n"
       "   (plancert --help, plancert COMMAND --help); edit the program, not this file.\n\n";
  std::string top = run_help(bin, {"--help"});
  auto cmds = subcommands(top);
  if (cmds.empty()) throw Failure("plancert --help lists no subcommands");
  o << "``plancert``\n" << underline("``plancert``", '-') << "\n\n";
  o << "Subcommands: ";
  for (std::size_t i = 0; i < cmds.size(); ++i) o << (i ? ", " : "") << ":ref:`" << cmds[i] << " <cli-" << cmds[i] << ">`";
  o << ".\n\n";
  code_block(o, "text", "$ plancert --help\n" + top);
  // Breadth-first over nested subcommands.
  std::vector<std::vector<std::string>> todo;
  for (const auto& c : cmds) todo.push_back({c});
  for (std::size_t i = 0; i < todo.size(); ++i) {
    auto path = todo[i];
    std::vector<std::string> args = path;
    args.push_back("--help");
    std::string help = run_help(bin, args);
    std::string name = "plancert", label = "cli";
    for (const auto& p : path) { name += " " + p; label += "-" + p; }
    auto ls = lines_of(help);
    o << ".. _" << label << ":\n\n``" << name << "``\n" << underline("``" + name + "``", '-') << "\n\n";
    if (!ls.empty() && !ls.front().empty() && ls.front().rfind("Usage:", 0) != 0) o << esc(ls.front()) << "\n\n";
    code_block(o, "text", "$ " + name + " --help\n" + help);
    for (const auto& sub : subcommands(help)) {
      auto next = path;
      next.push_back(sub);
      todo.push_back(next);
    }
  }
  return o.str();
}

// ---- IR reference (JSON Schemas) ----------------------------------------------------------------

std::string schemas_page(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().ends_with(".schema.json")) files.push_back(e.path());
  if (files.empty()) throw Failure("no *.schema.json in " + dir.string());
  auto order = [](const fs::path& p) {
    std::string name = p.filename().string();
    name = name.substr(0, name.size() - std::string(".schema.json").size());
    auto i = layer_index(name);
    return std::make_pair(i ? *i : 1000, name);
  };
  std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) { return order(a) < order(b); });
  std::ostringstream o;
  o << ".. This fragment is generated by plancert-docgen from spec/schemas/*.schema.json; edit those, not this file.\n\n";
  o << ".. list-table:: Schemas\n   :header-rows: 1\n   :widths: 25 75\n\n   * - Schema\n     - Title\n";
  std::vector<std::pair<std::string, nlohmann::json>> loaded;
  for (const auto& f : files) {
    const std::string name = order(f).second;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(f));
    } catch (const nlohmann::json::exception& e) {
      throw Failure(f.string() + ": " + e.what());
    }
    o << "   * - :ref:`" << name << " <schema-" << name << ">`\n     - " << esc(j.value("title", name)) << "\n";
    loaded.emplace_back(name, std::move(j));
  }
  o << "\n";
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [name, j] = loaded[i];
    o << ".. _schema-" << name << ":\n\n" << name << "\n" << underline(name, '-') << "\n\n";
    if (j.contains("description") && j["description"].is_string()) o << esc(j["description"].get<std::string>()) << "\n\n";
    o << ":File: ``spec/schemas/" << files[i].filename().string() << "``\n\n";
    if (j.contains("$defs") && j["$defs"].is_object()) {
      o << ".. list-table:: Definitions\n   :header-rows: 1\n   :widths: 25 75\n\n   * - Definition\n     - Description\n";
      for (const auto& [k, v] : j["$defs"].items()) {
        std::string d = v.is_object() && v.contains("description") && v["description"].is_string() ? v["description"].get<std::string>() : "";
        o << "   * - ``" << k << "``\n     - " << (d.empty() ? "" : esc(d)) << "\n";
      }
      o << "\n";
    }
    o << "The schema:\n\n";
    code_block(o, "json", read_file(files[i]));
  }
  return o.str();
}

// ---- one README section (a small Markdown subset) --------------------------------------------------

// Inline Markdown to reST: `code`, **bold**, *emphasis*, [text](url); the rest escaped.
std::string inline_md(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '`') {
      std::size_t e = s.find('`', i + 1);
      if (e != std::string::npos && e > i + 1) { out += "``" + s.substr(i + 1, e - i - 1) + "``"; i = e + 1; continue; }
    }
    if (s.compare(i, 2, "**") == 0) {
      std::size_t e = s.find("**", i + 2);
      if (e != std::string::npos && e > i + 2) { out += "**" + esc(s.substr(i + 2, e - i - 2)) + "**"; i = e + 2; continue; }
    }
    if (s[i] == '[') {
      std::size_t m = s.find("](", i), e = m == std::string::npos ? m : s.find(')', m);
      if (m != std::string::npos && e != std::string::npos) {
        out += "`" + esc(s.substr(i + 1, m - i - 1)) + " <" + s.substr(m + 2, e - m - 2) + ">`__";
        i = e + 1;
        continue;
      }
    }
    out += esc(std::string(1, s[i]));
    ++i;
  }
  return out;
}

std::vector<std::string> table_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string r = row;
  if (!r.empty() && r.front() == '|') r.erase(0, 1);
  if (!r.empty() && r.back() == '|') r.pop_back();
  std::string cur;
  bool code = false;  // a `|` inside `code` does not split cells
  for (char c : r) {
    if (c == '`') code = !code;
    if (c == '|' && !code) { cells.push_back(cur); cur.clear(); }
    else cur += c;
  }
  cells.push_back(cur);
  for (auto& c : cells) {
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
  }
  return cells;
}

std::string readme_section(const fs::path& readme, const std::string& section) {
  auto ls = lines_of(read_file(readme));
  std::size_t b = 0;
  while (b < ls.size() && ls[b] != "## " + section) ++b;
  if (b == ls.size()) throw Failure(readme.string() + " has no section \"## " + section + "\"");
  std::size_t e = b + 1;
  while (e < ls.size() && ls[e].rfind("## ", 0) != 0 && ls[e].rfind("# ", 0) != 0) ++e;
  std::ostringstream o;
  o << ".. This fragment is generated by plancert-docgen from the section \"" << section << "\" of " << readme.filename().string() << "; edit that file.\n\n";
  for (std::size_t i = b + 1; i < e;) {
    const std::string& l = ls[i];
    if (l.empty()) { ++i; continue; }
    if (l.rfind("```", 0) == 0) {
      std::string lang = l.substr(3), body;
      for (++i; i < e && ls[i].rfind("```", 0) != 0; ++i) body += ls[i] + "\n";
      ++i;
      code_block(o, lang == "sh" ? "console" : lang.empty() ? "text" : lang, body);
      continue;
    }
    if (l.rfind("### ", 0) == 0) {
      std::string t = inline_md(l.substr(4));
      o << t << "\n" << underline(t, '-') << "\n\n";
      ++i;
      continue;
    }
    if (l.front() == '|') {
      std::vector<std::vector<std::string>> rows;
      for (; i < e && !ls[i].empty() && ls[i].front() == '|'; ++i) {
        auto cells = table_cells(ls[i]);
        bool rule = std::all_of(cells.begin(), cells.end(), [](const std::string& c) { return c.find_first_not_of("-: ") == std::string::npos; });
        if (!rule) rows.push_back(cells);
      }
      o << ".. list-table::\n   :header-rows: 1\n\n";
      for (const auto& r : rows) {
        for (std::size_t c = 0; c < r.size(); ++c) o << (c == 0 ? "   * - " : "     - ") << inline_md(r[c]) << "\n";
      }
      o << "\n";
      continue;
    }
    if (l.rfind("- ", 0) == 0 || l.rfind("* ", 0) == 0) {
      for (; i < e && (ls[i].rfind("- ", 0) == 0 || ls[i].rfind("* ", 0) == 0 || ls[i].rfind("  ", 0) == 0); ++i) {
        if (ls[i].rfind("  ", 0) == 0) o << "  " << inline_md(ls[i].substr(ls[i].find_first_not_of(' '))) << "\n";
        else o << "- " << inline_md(ls[i].substr(2)) << "\n";
      }
      o << "\n";
      continue;
    }
    std::string para;
    for (; i < e && !ls[i].empty() && ls[i].front() != '|' && ls[i].rfind("```", 0) != 0 && ls[i].rfind("- ", 0) != 0; ++i)
      para += (para.empty() ? "" : "\n") + inline_md(ls[i]);
    o << para << "\n\n";
  }
  return o.str();
}

// ---- driver -------------------------------------------------------------------------------------

std::map<std::string, std::string> options(int argc, char** argv, int first, const std::set<std::string>& allowed) {
  std::map<std::string, std::string> out;
  for (int i = first; i < argc; ++i) {
    std::string k = argv[i];
    if (!allowed.count(k)) throw Usage("unknown option " + k);
    if (i + 1 >= argc) throw Usage(k + " needs a value");
    out[k] = argv[++i];
  }
  for (const auto& k : allowed)
    if (!out.count(k)) throw Usage(k + " is required");
  return out;
}

int run(int argc, char** argv) {
  if (argc < 2) throw Usage("a command is required");
  const std::string cmd = argv[1];
  if (cmd == "check" && argc == 2) return cmd_check();
  if (cmd == "passes" && argc == 2) return cmd_passes();
  if (cmd == "formulas") {
    auto o = options(argc, argv, 2, {"--out"});
    write_atomic(o["--out"], formulas_page());
    return 0;
  }
  if (cmd == "cli") {
    auto o = options(argc, argv, 2, {"--plancert", "--out"});
    write_atomic(o["--out"], cli_page(o["--plancert"]));
    return 0;
  }
  if (cmd == "schemas") {
    auto o = options(argc, argv, 2, {"--schemas", "--out"});
    write_atomic(o["--out"], schemas_page(o["--schemas"]));
    return 0;
  }
  if (cmd == "readme") {
    auto o = options(argc, argv, 2, {"--readme", "--section", "--out"});
    write_atomic(o["--out"], readme_section(o["--readme"], o["--section"]));
    return 0;
  }
  throw Usage("unknown command " + cmd);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Usage& e) {
    std::cerr << "plancert-docgen: " << e.what()
              << "\nusage: plancert-docgen check | passes | formulas --out F | cli --plancert BIN --out F | schemas --schemas DIR --out F"
                 " | readme --readme README.md --section NAME --out F\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "plancert-docgen: " << e.what() << "\n";
    return 1;
  }
}
