# Build switches. Each defaults to ON where what it needs is found, so a bare
# machine with a C++ compiler, CMake and BLAS/LAPACK builds the core and the CLI.

include(CheckLanguage)

# Desktop application: Qt 6 Widgets + VTK 9. Debian's VTK needs MPI::MPI_C
# defined before it is found.
find_package(Qt6 QUIET COMPONENTS Widgets OpenGLWidgets)
find_package(MPI QUIET COMPONENTS C)
set(CUBESOLVE_VTK_MODULES CommonCore CommonColor CommonDataModel RenderingCore RenderingOpenGL2
    RenderingFreeType InteractionStyle ImagingCore ChartsCore RenderingContext2D RenderingContextOpenGL2 IOExport)
find_package(VTK QUIET COMPONENTS ${CUBESOLVE_VTK_MODULES})
if(Qt6_FOUND AND VTK_FOUND AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/ui/CMakeLists.txt)
  set(_gui_default ON)
else()
  set(_gui_default OFF)
endif()
option(CUBESOLVE_GUI "Build the Qt 6 + VTK desktop application" ${_gui_default})

# CUDA backend.
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(_cuda_default ON)
else()
  set(_cuda_default OFF)
endif()
option(CUBESOLVE_CUDA "Build the CUDA backend (cuBLAS, cuSOLVER)" ${_cuda_default})

# GDAL raster input/output.
find_package(GDAL QUIET)
option(CUBESOLVE_GDAL "Read and write rasters through GDAL" ${GDAL_FOUND})

# MintPy stacks (ifgramStack.h5) through the HDF5 C library, with or without GDAL.
find_package(HDF5 QUIET COMPONENTS C)
option(CUBESOLVE_HDF5 "Read MintPy stacks through HDF5" ${HDF5_FOUND})

option(CUBESOLVE_MPI "Spread the CLI's solve over MPI ranks (mpirun, srun)" ${MPI_C_FOUND})

# The Python module: where Python's development files and nanobind are found.
find_package(Python 3.8 QUIET COMPONENTS Interpreter Development.Module)
set(_python_default OFF)
if(Python_FOUND)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir RESULT_VARIABLE _nb OUTPUT_QUIET ERROR_QUIET)
  if(_nb EQUAL 0)
    set(_python_default ON)
  endif()
endif()
option(CUBESOLVE_PYTHON "Build the Python module (nanobind)" ${_python_default})
option(CUBESOLVE_STRICT "Treat compiler warnings as errors" OFF)

# Tests use Qt Test; without Qt 6 Core + Test they are skipped.
find_package(Qt6 QUIET COMPONENTS Core Test)
if(Qt6Test_FOUND)
  set(_tests_default ON)
else()
  set(_tests_default OFF)
endif()
option(CUBESOLVE_TESTS "Build the Qt Test programs" ${_tests_default})

# ASan + UBSan (the asan preset): the core, the CLI and the tests.
option(CUBESOLVE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(CUBESOLVE_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined> $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=undefined>)
  add_compile_definitions(CUBESOLVE_ONE_TARGET)  # one copy of the engine's kernels (see kernels.hpp)
  add_link_options(-fsanitize=address,undefined)
endif()

# libFuzzer fuzzers of the readers and parsers (clang; the fuzz preset).
option(CUBESOLVE_FUZZ "Build the fuzz harnesses as libFuzzer fuzzers (needs clang)" OFF)
if(CUBESOLVE_FUZZ)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()

# Warnings for C++, and for CUDA through the host compiler.
function(cubesolve_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-psabi>
                                             $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")  # clang reports each SIMD loop it leaves scalar
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-pass-failed>)
    endif()
    if(CUBESOLVE_STRICT)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                                               $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
    endif()
  endif()
endfunction()
