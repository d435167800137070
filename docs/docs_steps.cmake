# docs/docs_steps.cmake: build-time steps of the `docs` target, run as
#   cmake -DSTEP=<prepare|mathjax> -D... -P docs_steps.cmake
#
# STEP=prepare  (variables SOURCE_ROOT, DOCS_SOURCE, OUT, PYTHON)
#   Removes the previous outputs under OUT (src, gen, doxygen, doctrees, html),
#   copies the reST sources DOCS_SOURCE into OUT/src, and provides the
#   generated pages:
#     OBLIGATION CATALOG HOOK: if SOURCE_ROOT/tools/gen_catalog.py exists it is
#     run as
#       PYTHON SOURCE_ROOT/tools/gen_catalog.py --spec SOURCE_ROOT/spec --out OUT/gen/catalog.rst
#     (working directory SOURCE_ROOT) and must write a reST fragment (no page
#     title; section underlines '-') to OUT/gen/catalog.rst. Otherwise a short
#     note is written there instead. The file is copied to
#     OUT/src/_generated/catalog.rst, which docs/catalog.rst includes.
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

if(STEP STREQUAL "prepare")
  require(SOURCE_ROOT DOCS_SOURCE OUT PYTHON)
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
    execute_process(
      COMMAND "${PYTHON}" "${generator}" --spec "${SOURCE_ROOT}/spec" --out "${catalog}"
      WORKING_DIRECTORY "${SOURCE_ROOT}"
      RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "docs: tools/gen_catalog.py failed (${rc})")
    endif()
    if(NOT EXISTS "${catalog}")
      message(FATAL_ERROR "docs: tools/gen_catalog.py did not write ${catalog}")
    endif()
  else()
    file(WRITE "${catalog}"
"The catalog is generated from ``spec/`` by ``tools/gen_catalog.py`` when the
documentation is built. This build found no generator, so the catalog is not
listed here; ``plancert explain CODE`` prints the rule of one obligation.
")
  endif()
  file(MAKE_DIRECTORY "${OUT}/src/_generated")
  file(COPY_FILE "${catalog}" "${OUT}/src/_generated/catalog.rst")

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
