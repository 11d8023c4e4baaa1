# eigstream_embed_dashboard(OUT FILE|PATH|TYPE ...): writes the C source OUT
# holding each FILE of pipeline/metrics/dashboard/ as a byte array served at PATH
# with Content-Type "TYPE; charset=utf-8" (UTF-8 text; metrics_http_assets, see metrics_http.h). Runs at
# configure time; each FILE is a configure dependency, so editing it
# regenerates OUT on the next build. A fresh checkout needs no extra step.
function(eigstream_embed_dashboard out)
  set(DASHBOARD_DATA "")
  set(DASHBOARD_TABLE "")
  foreach(entry IN LISTS ARGN)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 name)
    list(GET fields 1 url)
    list(GET fields 2 type)
    set(source ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${name})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
    file(READ ${source} hex HEX)
    string(LENGTH "${hex}" digits)
    math(EXPR length "${digits} / 2")
    # 32 bytes a line, then every byte as 0xNN.
    string(REGEX REPLACE "([0-9a-f]{64})" "\\1\n" hex "${hex}")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
    string(MAKE_C_IDENTIFIER "dashboard_${name}" id)
    string(APPEND DASHBOARD_DATA "static const unsigned char ${id}[] = {\n${bytes}0};\n")
    string(APPEND DASHBOARD_TABLE "    {\"${url}\", \"${type}; charset=utf-8\", ${id}, ${length}},\n")
  endforeach()
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/dashboard_assets.c.in ${out} @ONLY)
endfunction()
