# libeigstream-eig: the solver library as other programs link it.
#
# eigstream_eig (CMakeLists.txt) is what the daemon and the tools link: a
# static archive of non-PIC objects, as measured in README's Performance.
# For other programs the same sources, with the same options, are compiled
# once more as position-independent objects (eigstream_eig_pic), and with the
# cuda backend's objects (cuda/, already PIC) they make
#   libeigstream-eig.so.<SOVERSION>  exports exactly the functions of eig.h
#                                    (eig.map); OpenMP, LAPACKE, OpenBLAS,
#                                    cuBLAS and the static CUDA runtime are
#                                    private to it
#   libeigstream-eig.a               the same objects; a program linking it
#                                    links those dependencies itself
# installed with eig.h as <eigstream/eig.h>, the CMake package `eigstream`
# (eigstream::eig = the shared library, eigstream::eig_static) and the
# pkg-config module eigstream-eig.

include(CMakePackageConfigHelpers)

# The shared library's ABI version: bump it on any change of eig.h's ABI (a
# field of eig_plan_params, an enum value, a function's signature); eig.map
# names the symbol version after it.
set(EIGSTREAM_EIG_SOVERSION 2)
set(EIGSTREAM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/eigstream)

add_library(eigstream_eig_pic OBJECT ${EIGSTREAM_EIG_SOURCES})
set_target_properties(eigstream_eig_pic PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_compile_options(eigstream_eig_pic PRIVATE ${EIGSTREAM_EIG_OPTIONS})
target_link_libraries(eigstream_eig_pic PRIVATE OpenMP::OpenMP_C eigstream_lapacke)
set(eig_objects $<TARGET_OBJECTS:eigstream_eig_pic>)
if(EIGSTREAM_HAVE_CUDA)
  target_compile_definitions(eigstream_eig_pic PRIVATE EIGSTREAM_HAVE_CUDA=1)
  list(APPEND eig_objects $<TARGET_OBJECTS:eigstream_cuda>)
endif()

# What a program linking the static archive needs, as plain library names (the
# pkg-config file and the exported target say the same): LAPACKE, the BLAS
# (OpenBLAS: eig_threads.c sets its thread count), the OpenMP runtime, libm;
# with CUDA cuBLAS (the back-transformation of large n), the static CUDA
# runtime and what it needs (dl, rt, pthread) and libstdc++ (the host side of
# the .cu objects is C++).
set(EIGSTREAM_EIG_PRIVATE_LIBS lapacke)
foreach(lib ${BLAS_LIBRARIES} ${LAPACK_LIBRARIES})
  get_filename_component(name ${lib} NAME_WE)
  string(REGEX REPLACE "^lib" "" name ${name})
  list(APPEND EIGSTREAM_EIG_PRIVATE_LIBS ${name})
endforeach()
list(APPEND EIGSTREAM_EIG_PRIVATE_LIBS ${OpenMP_C_LIB_NAMES} m)
list(REMOVE_DUPLICATES EIGSTREAM_EIG_PRIVATE_LIBS)
set(EIGSTREAM_EIG_CUDA_LIBS "")
if(EIGSTREAM_HAVE_CUDA)
  set(EIGSTREAM_EIG_CUDA_LIBS cublas cudart_static dl rt pthread stdc++)
endif()

add_library(eigstream_eig_shared SHARED ${eig_objects})
target_link_libraries(eigstream_eig_shared PRIVATE OpenMP::OpenMP_C eigstream_lapacke ${MATH_LIBRARY})
target_link_options(eigstream_eig_shared PRIVATE
  "LINKER:--version-script=${CMAKE_CURRENT_SOURCE_DIR}/eig.map")
# Every symbol resolved at link time, so that a missing dependency fails here
# and not in a user's program (not under the sanitizers: clang leaves their
# runtime out of shared libraries).
if(NOT EIGSTREAM_SANITIZE AND NOT EIGSTREAM_FUZZ)
  target_link_options(eigstream_eig_shared PRIVATE "LINKER:--no-undefined")
endif()
set_target_properties(eigstream_eig_shared PROPERTIES
  OUTPUT_NAME eigstream-eig EXPORT_NAME eig
  VERSION ${PROJECT_VERSION} SOVERSION ${EIGSTREAM_EIG_SOVERSION}
  LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/eig.map)

add_library(eigstream_eig_static STATIC ${eig_objects})
target_link_libraries(eigstream_eig_static PRIVATE ${EIGSTREAM_EIG_PRIVATE_LIBS})
set_target_properties(eigstream_eig_static PROPERTIES OUTPUT_NAME eigstream-eig EXPORT_NAME eig_static)

if(EIGSTREAM_HAVE_CUDA)
  target_link_libraries(eigstream_eig_shared PRIVATE CUDA::cublas CUDA::cudart_static ${CMAKE_DL_LIBS}
                        Threads::Threads)
  target_link_libraries(eigstream_eig_static PRIVATE CUDA::cublas CUDA::cudart_static ${CMAKE_DL_LIBS} rt
                        pthread stdc++)
endif()

foreach(t eigstream_eig_shared eigstream_eig_static)
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS eigstream_eig_shared eigstream_eig_static EXPORT eigstream-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES eig.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/eigstream)
install(EXPORT eigstream-targets NAMESPACE eigstream:: DESTINATION ${EIGSTREAM_CMAKE_DIR})

configure_package_config_file(eigstream-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/eigstream-config.cmake
  INSTALL_DESTINATION ${EIGSTREAM_CMAKE_DIR})
# 0.x: a minor version may change the ABI (SOVERSION above), so only the same
# major.minor is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/eigstream-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/eigstream-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/eigstream-config-version.cmake
        DESTINATION ${EIGSTREAM_CMAKE_DIR})

# eigstream-eig.pc names the prefix it is installed under, which is known only
# when installing (cmake --install --prefix P, or /usr for the .deb): the
# install step configures it from eigstream-eig.pc.in.
# The CUDA runtime is named without the build machine's toolkit folder
# (-L/usr/local/cuda/...: lintian's pkg-config-bad-directive, and wrong on any
# machine whose toolkit lies elsewhere): Debian's nvidia-cuda-toolkit puts
# libcudart_static.a on the linker's path; with NVIDIA's toolkit a static link
# adds -L<toolkit>/lib64 or sets LIBRARY_PATH (docs/library.md).
list(TRANSFORM EIGSTREAM_EIG_PRIVATE_LIBS PREPEND "-l" OUTPUT_VARIABLE pc_libs)
if(EIGSTREAM_HAVE_CUDA)
  list(TRANSFORM EIGSTREAM_EIG_CUDA_LIBS PREPEND "-l" OUTPUT_VARIABLE pc_cuda)
  list(APPEND pc_libs ${pc_cuda})
endif()
list(REMOVE_ITEM pc_libs -llapacke)  # Requires.private: lapacke
list(JOIN pc_libs " " EIGSTREAM_EIG_PC_LIBS_PRIVATE)
install(CODE "
  set(EIGSTREAM_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(EIGSTREAM_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(EIGSTREAM_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(EIGSTREAM_PC_VERSION \"${PROJECT_VERSION}\")
  set(EIGSTREAM_PC_LIBS_PRIVATE \"${EIGSTREAM_EIG_PC_LIBS_PRIVATE}\")
  configure_file(\"${CMAKE_CURRENT_SOURCE_DIR}/eigstream-eig.pc.in\"
                 \"${CMAKE_CURRENT_BINARY_DIR}/pc/eigstream-eig.pc\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\" TYPE FILE
       FILES \"${CMAKE_CURRENT_BINARY_DIR}/pc/eigstream-eig.pc\")")
