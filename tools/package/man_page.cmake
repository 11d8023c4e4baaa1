# One manual page from a program's --help, run at build time by the target
# eigstream_man (CMakeLists.txt beside this file):
#   cmake -DHELP2MAN=... -DPROGRAM=path -DNAME="one line" -DVERSION=x.y.z
#         -DEPOCH=seconds -DOUT=dir/prog.1 -P man_page.cmake
# writes OUT (troff, for the tests and `man -l`) and OUT.gz (gzip -9n, what is
# installed). EPOCH (SOURCE_DATE_EPOCH, the release date of changelog.in)
# fixes the page's date, so that the same program gives the same bytes.
set(ENV{SOURCE_DATE_EPOCH} "${EPOCH}")
set(ENV{LC_ALL} C.UTF-8)
execute_process(
  COMMAND "${HELP2MAN}" --no-info --no-discard-stderr --section=1
          "--version-string=${VERSION}" "--name=${NAME}" "--output=${OUT}" "${PROGRAM}"
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}")
  message(FATAL_ERROR "help2man ${PROGRAM} failed (${rc}): ${err}")
endif()
execute_process(COMMAND gzip -9n -c "${OUT}" OUTPUT_FILE "${OUT}.gz" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}" "${OUT}.gz")
  message(FATAL_ERROR "gzip ${OUT} failed (${rc})")
endif()
