# Every third-party library comes from Debian (scripts/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
# railyard-dra-driver talks to the API server over HTTPS (libcurl4-openssl-dev).
find_package(CURL REQUIRED)
# HMAC-SHA256 and random challenges for the ranks' control channels (libssl-dev's libcrypto).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

# spdlog and fmt header-only: Debian's spdlog targets link the shared libfmt, and the CNI plugins
# must be static executables.
add_library(railyard_logging INTERFACE)
target_compile_definitions(railyard_logging INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY=1)
target_link_libraries(railyard_logging INTERFACE Threads::Threads)

# CUDA / NCCL: optional, decided at configure time (DESIGN.md: AUTO by default).
function(railyard_optional_feature name found)
  if(RAILYARD_WITH_${name} STREQUAL "ON" AND NOT ${found})
    message(FATAL_ERROR "RAILYARD_WITH_${name}=ON but ${name} was not found")
  endif()
  if(RAILYARD_WITH_${name} STREQUAL "OFF")
    set(RAILYARD_HAVE_${name} OFF PARENT_SCOPE)
  else()
    set(RAILYARD_HAVE_${name} ${${found}} PARENT_SCOPE)
  endif()
endfunction()

if(RAILYARD_FUZZ)  # the fuzz build compiles one CNI target with clang: no GPU code
  set(RAILYARD_WITH_CUDA OFF)
  set(RAILYARD_WITH_NCCL OFF)
endif()
# Where scripts/install-deps.sh puts the CUDA and NCCL wheels from PyPI (toolkit/ and nccl/);
# an installed toolkit at /usr/local/cuda is the fallback, CUDAToolkit_ROOT overrides both.
set(RAILYARD_CUDA_PREFIX /opt/railyard/cuda CACHE PATH "Where install-deps.sh put CUDA and NCCL")
if(NOT RAILYARD_WITH_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT)
    if(EXISTS ${RAILYARD_CUDA_PREFIX}/toolkit/bin/nvcc)
      set(CUDAToolkit_ROOT ${RAILYARD_CUDA_PREFIX}/toolkit)
    elseif(EXISTS /usr/local/cuda)
      set(CUDAToolkit_ROOT /usr/local/cuda)
    endif()
  endif()
  # CMake 3.25's FindCUDAToolkit marks CUDA::nvToolsExt deprecated without checking that the
  # target exists, when the project requires 3.25; CUDA 13 no longer ships that library. Below
  # 3.25 it skips the marking: asked for the search alone.
  set(_railyard_min_version ${CMAKE_MINIMUM_REQUIRED_VERSION})
  if(CMAKE_VERSION VERSION_LESS 3.26)
    set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  endif()
  find_package(CUDAToolkit QUIET)
  set(CMAKE_MINIMUM_REQUIRED_VERSION ${_railyard_min_version})
endif()
if(CUDAToolkit_FOUND AND NOT CUDAToolkit_NVCC_EXECUTABLE)
  set(CUDAToolkit_FOUND OFF)  # a runtime without nvcc cannot build the reduction kernel
endif()
railyard_optional_feature(CUDA CUDAToolkit_FOUND)
if(RAILYARD_HAVE_CUDA)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  # Hopper (H100/H200) and Ampere (A100) natively, PTX for what comes after.
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  enable_language(CUDA)
  add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
endif()

set(_nccl_found OFF)
if(NOT RAILYARD_WITH_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR nccl.h
            HINTS ${RAILYARD_CUDA_PREFIX}/nccl/include ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl
               HINTS ${RAILYARD_CUDA_PREFIX}/nccl/lib ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY AND RAILYARD_HAVE_CUDA)
    set(_nccl_found ON)
    file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h _nccl_defines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
    foreach(_part MAJOR MINOR PATCH)
      string(REGEX REPLACE ".*#define NCCL_${_part} ([0-9]+).*" "\\1" NCCL_${_part} "${_nccl_defines}")
    endforeach()
    set(NCCL_VERSION ${NCCL_MAJOR}.${NCCL_MINOR}.${NCCL_PATCH})
  endif()
endif()
railyard_optional_feature(NCCL _nccl_found)

# What the build has, said plainly: a build without GPU paths must not pass for one with them.
if(RAILYARD_HAVE_CUDA)
  set(RAILYARD_CUDA_VERSION ${CUDAToolkit_VERSION})
  message(STATUS "railyard: CUDA ${CUDAToolkit_VERSION} found: nvcc ${CUDAToolkit_NVCC_EXECUTABLE}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  set(RAILYARD_CUDA_VERSION "")
  message(STATUS "railyard: CUDA not found (or RAILYARD_WITH_CUDA=OFF): building WITHOUT the GPU "
                 "paths (GPU memory, the CUDA sum kernel); scripts/install-deps.sh puts CUDA in "
                 "${RAILYARD_CUDA_PREFIX} from PyPI")
endif()
if(RAILYARD_HAVE_NCCL)
  message(STATUS "railyard: NCCL ${NCCL_VERSION} found: ${NCCL_INCLUDE_DIR}/nccl.h, ${NCCL_LIBRARY}")
else()
  set(NCCL_VERSION "")
  message(STATUS "railyard: NCCL not found (or RAILYARD_WITH_NCCL=OFF, or no CUDA): building "
                 "WITHOUT the NCCL transport")
endif()

# rdma-core: the verbs transport compiles in every build (it runs where a NIC is).
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
message(STATUS "railyard: CUDA=${RAILYARD_HAVE_CUDA} NCCL=${RAILYARD_HAVE_NCCL} sanitize=${RAILYARD_SANITIZE}")

# The CNI plugins run on the host, exec'd by the container runtime: no runtime dependencies.
# (Not under the sanitizers, whose runtimes are shared libraries.)
function(railyard_static_executable target)
  if(NOT RAILYARD_SANITIZE)
    target_link_options(${target} PRIVATE -static)
    set_target_properties(${target} PROPERTIES LINK_SEARCH_START_STATIC ON LINK_SEARCH_END_STATIC ON)
  endif()
endfunction()
