# The jar's linux-x86_64-musl library (cmake/linux-musl.cmake).
set(TB_MUSL_ARCH x86_64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-musl.cmake)
