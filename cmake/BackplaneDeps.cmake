# Finds every optional backend library and records the result with
# bp_backend_result (see BackplaneOptions.cmake). Each found library becomes an
# imported target that only the files of src/backends/<x>/ (and the
# implementations using it) see.

# --- OpenMP --------------------------------------------------------------------
if(NOT BP_MODE_OPENMP STREQUAL "OFF")
  find_package(OpenMP COMPONENTS CXX QUIET)
endif()
bp_backend_result(OPENMP "${OpenMP_CXX_FOUND}" "OpenMP ${OpenMP_CXX_VERSION}")

# --- cpuinfo (ISA detection; a compiler-builtin fallback exists) ---------------
if(NOT BP_MODE_CPUINFO STREQUAL "OFF")
  find_path(CPUINFO_INCLUDE_DIR cpuinfo.h)
  find_library(CPUINFO_LIBRARY cpuinfo)
endif()
if(CPUINFO_INCLUDE_DIR AND CPUINFO_LIBRARY)
  set(_found TRUE)
else()
  set(_found FALSE)
endif()
bp_backend_result(CPUINFO ${_found} "${CPUINFO_LIBRARY}")
if(BP_HAVE_CPUINFO AND NOT TARGET bp::cpuinfo)
  add_library(bp::cpuinfo UNKNOWN IMPORTED)
  set_target_properties(bp::cpuinfo PROPERTIES IMPORTED_LOCATION "${CPUINFO_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${CPUINFO_INCLUDE_DIR}")
endif()

# --- OpenBLAS (the OpenMP variant, with its LAPACK) -----------------------------
if(NOT BP_MODE_OPENBLAS STREQUAL "OFF")
  # Debian installs the OpenMP flavour's headers in their own folder.
  find_path(OPENBLAS_INCLUDE_DIR cblas.h
            PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
                  /usr/include/openblas NO_DEFAULT_PATH)
  find_path(OPENBLAS_INCLUDE_DIR cblas.h)
  find_library(OPENBLAS_LIBRARY NAMES openblas
               PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp NO_DEFAULT_PATH)
  find_library(OPENBLAS_LIBRARY NAMES openblaso openblas)
endif()
if(OPENBLAS_INCLUDE_DIR AND OPENBLAS_LIBRARY)
  set(_found TRUE)
else()
  set(_found FALSE)
endif()
bp_backend_result(OPENBLAS ${_found} "${OPENBLAS_LIBRARY}")
if(BP_HAVE_OPENBLAS AND NOT TARGET bp::openblas)
  add_library(bp::openblas UNKNOWN IMPORTED)
  set_target_properties(bp::openblas PROPERTIES IMPORTED_LOCATION "${OPENBLAS_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${OPENBLAS_INCLUDE_DIR}")
endif()

# --- oneDNN --------------------------------------------------------------------
if(NOT BP_MODE_ONEDNN STREQUAL "OFF")
  find_package(dnnl CONFIG QUIET)
endif()
if(TARGET DNNL::dnnl)
  set(_found TRUE)
else()
  set(_found FALSE)
endif()
bp_backend_result(ONEDNN ${_found} "oneDNN ${dnnl_VERSION}")

# --- FFTW ----------------------------------------------------------------------
if(NOT BP_MODE_FFTW STREQUAL "OFF")
  find_path(FFTW_INCLUDE_DIR fftw3.h)
  find_library(FFTW_LIBRARY fftw3)
  find_library(FFTWF_LIBRARY fftw3f)
  # The OpenMP variant (same thread pool as ours), for threaded plans; optional.
  find_library(FFTW_OMP_LIBRARY fftw3_omp)
  find_library(FFTWF_OMP_LIBRARY fftw3f_omp)
endif()
if(FFTW_INCLUDE_DIR AND FFTW_LIBRARY AND FFTWF_LIBRARY)
  set(_found TRUE)
else()
  set(_found FALSE)
endif()
bp_backend_result(FFTW ${_found} "${FFTW_LIBRARY}")
if(BP_HAVE_FFTW AND NOT TARGET bp::fftw)
  add_library(bp::fftw INTERFACE IMPORTED)
  set_target_properties(bp::fftw PROPERTIES INTERFACE_LINK_LIBRARIES "${FFTW_LIBRARY};${FFTWF_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${FFTW_INCLUDE_DIR}")
  if(FFTW_OMP_LIBRARY AND FFTWF_OMP_LIBRARY)
    # The threaded libraries come first: they call into the plain ones.
    set_target_properties(bp::fftw PROPERTIES
      INTERFACE_LINK_LIBRARIES "${FFTW_OMP_LIBRARY};${FFTWF_OMP_LIBRARY};${FFTW_LIBRARY};${FFTWF_LIBRARY}"
      INTERFACE_COMPILE_DEFINITIONS "BP_FFTW_OMP=1")
  endif()
endif()

# --- CUDA toolkit and its libraries (all inside backplane_cuda) -----------------
set(_cuda_found FALSE)
set(_cuda_detail "nvcc not found")
if(NOT BP_MODE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      set(_cuda_found TRUE)
      set(_cuda_detail "CUDA ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER})")
    else()
      set(_cuda_detail "nvcc found but the CUDA toolkit libraries were not")
    endif()
  endif()
endif()
bp_backend_result(CUDA ${_cuda_found} "${_cuda_detail}")

# Each CUDA library is used only when CUDA itself is.
macro(bp_cuda_library name target)
  if(BP_HAVE_CUDA AND TARGET ${target})
    bp_backend_result(${name} TRUE "${target}")
  elseif(BP_HAVE_CUDA)
    bp_backend_result(${name} FALSE "${target} not in the toolkit")
  else()
    bp_backend_result(${name} FALSE "needs CUDA")
  endif()
endmacro()
bp_cuda_library(CUBLAS CUDA::cublas)
bp_cuda_library(CUBLASLT CUDA::cublasLt)
bp_cuda_library(CUFFT CUDA::cufft)
bp_cuda_library(CUSOLVER CUDA::cusolver)

# cuDNN ships beside the toolkit (or in a Python wheel), not as a CUDA:: target.
# The wheel (nvidia-cudnn-cu12/-cu13, e.g. the one PyTorch brings) is a
# fallback after the toolkit; it ships libcudnn.so.9 without the unversioned name.
if(BP_HAVE_CUDA AND NOT BP_MODE_CUDNN STREQUAL "OFF")
  set(_bp_cudnn_wheel "")
  if(Python_EXECUTABLE)
    execute_process(COMMAND ${Python_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"
                    OUTPUT_VARIABLE _bp_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_bp_site)
      set(_bp_cudnn_wheel ${_bp_site}/nvidia/cudnn ${_bp_site}/nvidia/cu13 ${_bp_site}/nvidia/cu12)
    endif()
  endif()
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${_bp_cudnn_wheel} PATH_SUFFIXES include)
  find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 HINTS ${CUDAToolkit_LIBRARY_DIR} ${_bp_cudnn_wheel}
               PATH_SUFFIXES lib lib64)
endif()
if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
  bp_backend_result(CUDNN TRUE "${CUDNN_LIBRARY}")
  if(NOT TARGET bp::cudnn)
    add_library(bp::cudnn UNKNOWN IMPORTED)
    set_target_properties(bp::cudnn PROPERTIES IMPORTED_LOCATION "${CUDNN_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
  endif()
elseif(BP_HAVE_CUDA)
  bp_backend_result(CUDNN FALSE "cudnn.h / libcudnn not found")
else()
  bp_backend_result(CUDNN FALSE "needs CUDA")
endif()

# The cuDNN C++ frontend, header-only (cudnn:sdpa builds its graphs with it):
# scripts/setup.sh unpacks the headers of the PyPI wheel nvidia-cudnn-frontend
# into .venv/cudnn_frontend/include; BACKPLANE_CUDNN_FRONTEND_DIR points
# elsewhere. Without it cudnn:sdpa is listed as not built.
set(BACKPLANE_CUDNN_FRONTEND_DIR "" CACHE PATH "Folder holding cudnn_frontend.h")
set(BP_HAVE_CUDNN_FRONTEND FALSE)
if(BP_HAVE_CUDNN)
  find_path(CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
            HINTS ${BACKPLANE_CUDNN_FRONTEND_DIR} ${PROJECT_SOURCE_DIR}/.venv/cudnn_frontend/include)
  if(CUDNN_FRONTEND_INCLUDE_DIR)
    set(BP_HAVE_CUDNN_FRONTEND TRUE)
    message(STATUS "  cuDNN frontend headers: ${CUDNN_FRONTEND_INCLUDE_DIR} (cudnn:sdpa)")
  else()
    message(STATUS "  cuDNN frontend headers: not found (cudnn:sdpa not built; scripts/setup.sh fetches them)")
  endif()
endif()

# NCCL and cuSPARSELt: beside the toolkit, or (cuSPARSELt) from the PyPI wheel
# nvidia-cusparselt-cu13, which scripts/setup.sh unpacks into
# .venv/cusparselt (BACKPLANE_CUSPARSELT_DIR points elsewhere); found by
# header and library.
macro(bp_cuda_side_library name header lib)
  if(BP_HAVE_CUDA AND NOT BP_MODE_${name} STREQUAL "OFF")
    find_path(${name}_INCLUDE_DIR ${header} HINTS ${CUDAToolkit_INCLUDE_DIRS} ${BP_${name}_HINTS}
              PATH_SUFFIXES include)
    find_library(${name}_LIBRARY ${lib} HINTS ${CUDAToolkit_LIBRARY_DIR} ${BP_${name}_HINTS}
                 PATH_SUFFIXES lib lib64)
  endif()
  string(TOLOWER ${name} _lname)
  if(${name}_INCLUDE_DIR AND ${name}_LIBRARY)
    bp_backend_result(${name} TRUE "${${name}_LIBRARY}")
    if(NOT TARGET bp::${_lname})
      add_library(bp::${_lname} UNKNOWN IMPORTED)
      set_target_properties(bp::${_lname} PROPERTIES IMPORTED_LOCATION "${${name}_LIBRARY}"
                            INTERFACE_INCLUDE_DIRECTORIES "${${name}_INCLUDE_DIR}")
    endif()
  elseif(BP_HAVE_CUDA)
    bp_backend_result(${name} FALSE "${header} / lib${lib} not found")
  else()
    bp_backend_result(${name} FALSE "needs CUDA")
  endif()
endmacro()
set(BACKPLANE_CUSPARSELT_DIR "" CACHE PATH "Folder holding include/cusparseLt.h and lib/libcusparseLt.so")
set(BP_CUSPARSELT_HINTS ${BACKPLANE_CUSPARSELT_DIR} ${PROJECT_SOURCE_DIR}/.venv/cusparselt)
bp_cuda_side_library(NCCL nccl.h nccl)
bp_cuda_side_library(CUSPARSELT cusparseLt.h cusparseLt)
