# Wire protocol v1 codec (included from pipeline/CMakeLists.txt).
add_library(eigstream_protocol STATIC ${CMAKE_CURRENT_LIST_DIR}/protocol.c ${CMAKE_CURRENT_LIST_DIR}/dispatch_control.c
  ${CMAKE_CURRENT_LIST_DIR}/transport_memory.c)
# eig.h: the element byte is an eig_precision; config.h: the mode byte is a
# config_output_mode (header-only use of both: no link).
target_include_directories(eigstream_protocol PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_SOURCE_DIR}/eig
  ${PROJECT_SOURCE_DIR}/config)
target_link_libraries(eigstream_protocol PUBLIC Threads::Threads PRIVATE ${MATH_LIBRARY})
set_target_properties(eigstream_protocol PROPERTIES POSITION_INDEPENDENT_CODE ON)
