# docs/docs_steps.cmake: build-time steps of the `docs` target, run as
#   cmake -DSTEP=<prepare|mathjax> -D... -P docs_steps.cmake
#
# STEP=prepare  (variables SOURCE_ROOT, DOCS_SOURCE, OUT, PYTHON, DOCGEN, PLANCERT)
#   Removes the previous outputs under OUT (src, gen, doxygen, doctrees, html),
#   copies the reST sources DOCS_SOURCE into OUT/src, and generates the pages
#   that are made from the code. Each generator writes a reST fragment (no page
#   title; sections underlined with '-') into OUT/gen/, which is copied into
#   OUT/src/_generated/, where the static page named in brackets includes it:
#     gen/catalog.rst      [catalog.rst]  PYTHON SOURCE_ROOT/tools/gen_catalog.py
#                          --spec SOURCE_ROOT/spec --out ... (if the script exists;
#                          otherwise a short note);
#     gen/formulas.rst     [formulas.rst] DOCGEN formulas --out ...: the declared
#                          closed forms of every registered pass, compared with
#                          the code first (a difference fails the step);
#     gen/cli.rst          [cli.rst]      DOCGEN cli --plancert PLANCERT --out ...:
#                          the help texts of the built program;
#     gen/schemas.rst      [ir.rst]       DOCGEN schemas --schemas
#                          SOURCE_ROOT/spec/schemas --out ...;
#     gen/performance.rst  [performance.rst] DOCGEN readme --readme
#                          SOURCE_ROOT/README.md --section Performance --out ...;
#     gen/performance_log.rst [performance.rst] DOCGEN readme --readme
#                          SOURCE_ROOT/bench/PERFORMANCE_LOG.md --section
#                          "Session history" --out ...
#   DOCGEN is plancert-docgen (passes/formulas/), PLANCERT the plancert program;
#   the docs target depends on both. Every generator runs with working
#   directory SOURCE_ROOT, and a failing generator fails the step.
#
# STEP=mathjax  (variables MATHJAX_DIR, OUT)
#   Copies the parts of Debian's MathJax 2 (libjs-mathjax) that the
#   TeX-AMS-MML_HTMLorMML configuration loads into OUT/html/_static/mathjax,
#   so that the HTML renders formulas offline and stays self-contained.
cmake_minimum_required(VERSION 3.25)

function(require)
  foreach(v IN LISTS ARGN)
    if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
      message(FATAL_ERROR "docs_steps.cmake: -D${v}=... is required for STEP=${STEP}")
    endif()
  endforeach()
endfunction()

# Runs one generator (the arguments after OUTPUT) and checks that it wrote OUTPUT.
function(generate output)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${SOURCE_ROOT}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "docs: generator failed (${rc}): ${cmd}")
  endif()
  if(NOT EXISTS "${output}")
    message(FATAL_ERROR "docs: the generator did not write ${output}")
  endif()
endfunction()

if(STEP STREQUAL "prepare")
  require(SOURCE_ROOT DOCS_SOURCE OUT PYTHON DOCGEN PLANCERT)
  # Only our own subfolders: OUT may also be CMake's binary dir of docs/.
  foreach(d src gen doxygen doctrees html)
    file(REMOVE_RECURSE "${OUT}/${d}")
  endforeach()
  file(MAKE_DIRECTORY "${OUT}/src" "${OUT}/gen")
  file(COPY "${DOCS_SOURCE}/" DESTINATION "${OUT}/src"
       PATTERN "CMakeLists.txt" EXCLUDE
       PATTERN "*.in" EXCLUDE
       PATTERN "*.cmake" EXCLUDE
       PATTERN "*.dox" EXCLUDE
       PATTERN "__pycache__" EXCLUDE)

  set(catalog "${OUT}/gen/catalog.rst")
  set(generator "${SOURCE_ROOT}/tools/gen_catalog.py")
  if(EXISTS "${generator}")
    generate("${catalog}" "${PYTHON}" "${generator}" --spec "${SOURCE_ROOT}/spec" --out "${catalog}")
  else()
    file(WRITE "${catalog}"
"The catalog is generated from ``spec/`` by ``tools/gen_catalog.py`` when the
documentation is built. This build found no generator, so the catalog is not
listed here; ``plancert explain CODE`` prints the rule of one obligation.
")
  endif()
  generate("${OUT}/gen/formulas.rst" "${DOCGEN}" formulas --out "${OUT}/gen/formulas.rst")
  generate("${OUT}/gen/cli.rst" "${DOCGEN}" cli --plancert "${PLANCERT}" --out "${OUT}/gen/cli.rst")
  generate("${OUT}/gen/schemas.rst" "${DOCGEN}" schemas --schemas "${SOURCE_ROOT}/spec/schemas" --out "${OUT}/gen/schemas.rst")
  generate("${OUT}/gen/performance.rst" "${DOCGEN}" readme --readme "${SOURCE_ROOT}/README.md" --section Performance
           --out "${OUT}/gen/performance.rst")
  generate("${OUT}/gen/performance_log.rst" "${DOCGEN}" readme --readme "${SOURCE_ROOT}/bench/PERFORMANCE_LOG.md"
           --section "Session history" --out "${OUT}/gen/performance_log.rst")

  file(MAKE_DIRECTORY "${OUT}/src/_generated")
  foreach(page catalog formulas cli schemas performance performance_log)
    file(COPY_FILE "${OUT}/gen/${page}.rst" "${OUT}/src/_generated/${page}.rst")
  endforeach()

elseif(STEP STREQUAL "mathjax")
  require(MATHJAX_DIR OUT)
  set(dest "${OUT}/html/_static/mathjax")
  file(REMOVE_RECURSE "${dest}")
  # What config/TeX-AMS-MML_HTMLorMML.js loads: the TeX and MathML input jax,
  # the HTML-CSS output jax with its TeX web fonts (and the metrics for locally
  # installed STIX fonts), the NativeMML, CommonHTML,
  # PreviewHTML and PlainSource output jax (the renderer menu), the extensions
  # and the English messages. SVG output and the other font families are left out.
  set(parts
    MathJax.js
    config/TeX-AMS-MML_HTMLorMML.js
    config/local
    extensions
    jax/element
    jax/input
    jax/output/HTML-CSS/autoload
    jax/output/HTML-CSS/config.js
    jax/output/HTML-CSS/imageFonts.js
    jax/output/HTML-CSS/jax.js
    jax/output/HTML-CSS/fonts/TeX
    jax/output/HTML-CSS/fonts/STIX
    jax/output/CommonHTML
    jax/output/NativeMML
    jax/output/PreviewHTML
    jax/output/PlainSource
    fonts/HTML-CSS/TeX/woff
    fonts/HTML-CSS/TeX/otf
    localization/en)
  foreach(p IN LISTS parts)
    if(NOT EXISTS "${MATHJAX_DIR}/${p}")
      message(FATAL_ERROR "docs: ${MATHJAX_DIR}/${p} is missing (package libjs-mathjax)")
    endif()
    get_filename_component(parent "${dest}/${p}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    # FOLLOW_SYMLINK_CHAIN: copy the file, not a link, if a part is a symlink.
    file(COPY "${MATHJAX_DIR}/${p}" DESTINATION "${parent}" FOLLOW_SYMLINK_CHAIN)
  endforeach()

else()
  message(FATAL_ERROR "docs_steps.cmake: unknown STEP '${STEP}' (prepare or mathjax)")
endif()
